// Waybill small behaviours, on every page: copy buttons, confirmations, image previews,
// auto-submitting filters, the service worker and Web Push. Listeners are delegated from
// document so they keep working inside regions that live.js replaces.

const csrf = () => document.querySelector('meta[name="csrf-token"]')?.content ?? "";

// ---- Copy to clipboard: button[data-copy] ------------------------------------------------------

const copyTimers = new WeakMap();

async function copy(button) {
  let done = false;
  try {
    await navigator.clipboard.writeText(button.dataset.copy);
    done = true;
  } catch {
    const source = button.parentElement?.querySelector("[data-copy-source]");
    if (source) {
      source.focus();
      source.select();
      try { done = document.execCommand("copy"); } catch { /* left selected for the user to copy */ }
    }
  }
  const text = button.dataset.copiedText;
  if (!done || !text) return;
  if (!copyTimers.has(button)) button.dataset.originalText = button.textContent;
  clearTimeout(copyTimers.get(button));
  button.textContent = text;
  copyTimers.set(button, setTimeout(() => {
    button.textContent = button.dataset.originalText;
    copyTimers.delete(button);
  }, 2000));
}

document.addEventListener("click", (e) => {
  const button = e.target.closest?.("button[data-copy]");
  if (button) { e.preventDefault(); copy(button); }
});

// ---- The phone's menu: nav#menu, shown over the page by #menu:target ---------------------------
// While it covers the page, Tab and Shift+Tab stay in it (focus would go to links hidden under it)
// and Escape closes it, back on the Menu link.

const menu = document.getElementById("menu");
const menuOpen = () => menu && location.hash === "#menu" && getComputedStyle(menu).position === "fixed";

menu?.addEventListener("focusout", (e) => {
  if (!menuOpen() || !e.relatedTarget || menu.contains(e.relatedTarget)) return;
  const stops = [...menu.querySelectorAll("a[href], button:not([disabled])")];
  // Leaving forwards past the last control starts again at the first; backwards, at the last.
  const after = e.target.compareDocumentPosition(e.relatedTarget) & Node.DOCUMENT_POSITION_FOLLOWING;
  (after ? stops[0] : stops[stops.length - 1])?.focus();
});

document.addEventListener("keydown", (e) => {
  if (e.key !== "Escape" || !menuOpen()) return;
  location.replace("#main");
  document.querySelector(".menu-toggle")?.focus();
});

// ---- Confirmations: form[data-confirm] -----------------------------------------------------------

document.addEventListener("submit", (e) => {
  const form = e.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !confirm(form.dataset.confirm)) e.preventDefault();
});

// ---- Image previews: input[type=file][data-preview] → img[data-preview-for=<id>] -------------

const previewURLs = new WeakMap();

function preview(input) {
  if (!input.id) return;
  const img = document.querySelector(`img[data-preview-for="${CSS.escape(input.id)}"]`);
  if (!img) return;
  if (previewURLs.has(img)) URL.revokeObjectURL(previewURLs.get(img));
  previewURLs.delete(img);
  const file = input.files?.[0];
  if (file && file.type.startsWith("image/")) {
    const url = URL.createObjectURL(file);
    previewURLs.set(img, url);
    img.src = url;
    img.hidden = false;
  } else {
    img.removeAttribute("src");
    img.hidden = true;
  }
}

// ---- Filters: [data-autosubmit] submits its form on change ---------------------------------------

document.addEventListener("change", (e) => {
  const el = e.target;
  if (el.matches?.("input[type=file][data-preview]")) preview(el);
  if (el.matches?.("[data-autosubmit]") && el.form) {
    if (el.form.requestSubmit) el.form.requestSubmit();
    else el.form.submit();
  }
});

// ---- Service worker -----------------------------------------------------------------------------

const registration = "serviceWorker" in navigator
  ? navigator.serviceWorker.register("/sw.js").catch(() => null)
  : Promise.resolve(null);

// A new version deployed: its worker installs and waits; [data-update] offers to switch, and the
// page reloads once the new worker has taken over. (The very first install takes over by itself.)
let switching = false;
function offerUpdate(worker) {
  const banner = document.querySelector("[data-update]");
  if (!banner || !worker) return;
  banner.hidden = false;
  banner.querySelector("[data-update-reload]")?.addEventListener("click", () => {
    switching = true;
    worker.postMessage({ type: "skip-waiting" });
  }, { once: true });
}
registration.then((reg) => {
  if (!reg) return;
  // An app left open for days (a driver's phone) looks for a new version when it comes back to the
  // screen, at most once an hour; navigations look by themselves.
  let lastCheck = Date.now();
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && Date.now() - lastCheck > 3600000) {
      lastCheck = Date.now();
      reg.update().catch(() => {});
    }
  });
  navigator.serviceWorker.addEventListener("controllerchange", () => { if (switching) location.reload(); });
  if (reg.waiting && navigator.serviceWorker.controller) offerUpdate(reg.waiting);
  reg.addEventListener("updatefound", () => {
    const worker = reg.installing;
    worker?.addEventListener("statechange", () => {
      if (worker.state === "installed" && navigator.serviceWorker.controller) offerUpdate(worker);
    });
  });
});

// ---- The app's badge: unread notifications and messages (Badging API, where it exists) ---------

function unreadTotal() {
  const count = (selector) => {
    const el = document.querySelector(selector);
    return el && !el.hidden ? parseInt(el.textContent.trim(), 10) || 0 : 0;
  };
  return count("[data-unread-count]") + count("[data-messages-unread]");
}

let shownBadge = null;
function showBadge() {
  const n = unreadTotal();
  if (n === shownBadge) return;
  shownBadge = n;
  (n > 0 ? navigator.setAppBadge(n) : navigator.clearAppBadge()).catch(() => {});
}
if ("setAppBadge" in navigator && document.body.classList.contains("signed-in")) {
  showBadge();
  // live.js changes the counts as events arrive: watch those two elements, not the whole page.
  const watch = new MutationObserver(showBadge);
  for (const el of document.querySelectorAll("[data-unread-count], [data-messages-unread]")) {
    watch.observe(el, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["hidden"] });
  }
}

// ---- Web Push: [data-enable-push] ------------------------------------------------------------

function base64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

// Some browsers never settle subscribe() when their push service is unreachable.
const within = (promise, ms) => Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), ms))]);

async function enablePush(button, key) {
  const state = document.querySelector("[data-push-state]");
  const say = (name) => {
    if (!state) return;
    const attr = "text" + name;
    const text = state.dataset[attr] ?? button.dataset[attr];
    if (text != null) state.textContent = text;
    state.hidden = false;
  };
  button.disabled = true;
  try {
    const permission = await Notification.requestPermission();
    if (permission !== "granted") {
      if (permission === "denied") button.hidden = true;
      throw new Error("permission " + permission);
    }
    const reg = (await registration) ?? (await navigator.serviceWorker.register("/sw.js"));
    await within(navigator.serviceWorker.ready, 10000);
    const options = { userVisibleOnly: true, applicationServerKey: base64url(key) };
    let subscription;
    try {
      subscription = await within(reg.pushManager.subscribe(options), 20000);
    } catch (err) {
      // Subscribed before with another server key: start over.
      const old = await reg.pushManager.getSubscription();
      if (!old) throw err;
      await old.unsubscribe();
      subscription = await within(reg.pushManager.subscribe(options), 20000);
    }
    const res = await fetch("/app/devices", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: JSON.stringify({ subscription: subscription.toJSON() }),
    });
    if (!res.ok) throw new Error("devices " + res.status);
    say("Done");
  } catch {
    say("Failed");
  } finally {
    button.disabled = false;
  }
}

const vapidKey = document.querySelector('meta[name="vapid-key"]')?.content;
if (vapidKey && "serviceWorker" in navigator && "PushManager" in window && "Notification" in window
    && Notification.permission !== "denied") {
  for (const button of document.querySelectorAll("[data-enable-push]")) {
    button.hidden = false;
    button.addEventListener("click", () => enablePush(button, vapidKey));
  }
}

// ---- Print: button[data-print] (the labels page) ------------------------------------------------

document.addEventListener("click", (event) => {
  if (event.target.closest?.("[data-print]")) window.print();
});

// ---- The board's selection: input[data-select-all] ticks every card of its column ---------------

document.addEventListener("change", (event) => {
  const all = event.target.closest?.("[data-select-all]");
  if (!all) return;
  const column = all.closest("section");
  for (const box of column?.querySelectorAll('input[type="checkbox"][form="bulk-form"]') ?? []) box.checked = all.checked;
});

// ---- Back in the phone's top bar: a[data-back] ----------------------------------------------------
// The link goes to the person's first tab; where this page was opened from another of ours, back
// returns there instead, as an app's back does.

document.addEventListener("click", (event) => {
  const link = event.target.closest?.("a[data-back]");
  if (!link || history.length < 2 || !document.referrer.startsWith(location.origin + "/")) return;
  event.preventDefault();
  history.back();
});
