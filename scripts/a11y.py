"""Accessibility checks for the browser tests: axe-core on the page a Selenium driver shows.

usage (from a test such as web-test.py, after `python3 -m pip install axe-selenium-python`):

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import a11y
    problems = a11y.serious_violations(driver, "customer /orders phone dark")
    check("customer /orders is accessible", not problems, "\n".join(problems))

axe-core comes bundled with axe-selenium-python (its version: `a11y.axe_version(driver)`); set
AXE_SCRIPT to the path of another axe.min.js to use that one instead. The rules are WCAG 2.0/2.1
A and AA and axe's best practices; only what axe rates "serious" or "critical" is reported, less two
findings that older axe-cores make on valid HTML (see _outdated).
"""
import os

from axe_selenium_python import Axe

# Read once for the whole run; sent to a page only when it does not have axe yet (once per page
# load: a colour scheme or window size changed on the same page reuses it).
_SCRIPT = None
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
SERIOUS = ("serious", "critical")


def _inject(driver):
    global _SCRIPT
    if driver.execute_script("return typeof window.axe === 'object' && typeof window.axe.run === 'function'"):
        return
    if _SCRIPT is None:
        with open(os.environ.get("AXE_SCRIPT") or Axe(driver).script_url, encoding="utf-8") as f:
            _SCRIPT = f.read()
    driver.execute_script(_SCRIPT)


def axe_version(driver):
    """The version of axe-core the checks use (injects it into the current page)."""
    _inject(driver)
    return driver.execute_script("return axe.version")


def _target(node):
    # A node inside an iframe or a shadow root has a list of selectors, outermost first.
    return " >> ".join(t if isinstance(t, str) else " >>> ".join(t) for t in node["target"])


def _detail(node):
    # For contrast, what axe measured: the text's and the background's colours and the ratio.
    for check in node.get("any", []):
        data = check.get("data")
        if check.get("id") == "color-contrast" and isinstance(data, dict) and data.get("contrastRatio"):
            return f" [{data.get('fgColor')} on {data.get('bgColor')}: {data['contrastRatio']}:1, needs {data.get('expectedContrastRatio')}]"
    return ""


def _outdated(rule, node, version):
    """What axe-core fixed since: autocomplete="off" refused on some types (3.1.2), and
    autocomplete="username" on type="email", which HTML allows since 2020 (4.3)."""
    html = node.get("html", "")
    if rule != "autocomplete-valid":
        return False
    if version < (3, 1, 2) and 'autocomplete="off"' in html:
        return True
    return version < (4, 3) and 'type="email"' in html and 'autocomplete="username"' in html


def serious_violations(driver, context_name):
    """One line per element that breaks a serious or critical rule on the current page:
    "<context_name>: <rule> (<impact>) <selector> [contrast] — <start of its HTML>". Empty when none."""
    _inject(driver)
    previous = driver.timeouts.script
    driver.set_script_timeout(60)
    try:
        results = driver.execute_async_script(
            # Older axe-cores refuse tags they do not know (3.1 has no wcag21a): ask for those it has.
            "const done = arguments[arguments.length - 1];"
            "const known = new Set(axe.getRules().flatMap(r => r.tags));"
            "axe.run(document, {runOnly: {type: 'tag', values: arguments[0].filter(t => known.has(t))},"
            "                   resultTypes: ['violations']}).then(done, e => done({error: String(e)}));", TAGS)
    finally:
        driver.set_script_timeout(previous)
    if results.get("error"):
        return [f"{context_name}: axe failed: {results['error']}"]
    version = tuple(int(n) for n in results.get("testEngine", {}).get("version", "0").split(".")[:3] if n.isdigit())
    lines = []
    for rule in results["violations"]:
        for node in rule["nodes"]:
            impact = node.get("impact") or rule.get("impact")
            if impact in SERIOUS and not _outdated(rule["id"], node, version):
                html = " ".join(node.get("html", "").split())
                html = html if len(html) <= 110 else html[:107] + "..."
                lines.append(f"{context_name}: {rule['id']} ({impact}) {_target(node)}{_detail(node)} — {html}")
    return lines
