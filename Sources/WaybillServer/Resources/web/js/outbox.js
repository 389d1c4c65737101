// Waybill driver steps without network. A step's form (form[data-outbox]: accept, picked up,
// delivered with its signature and photo, failed) submitted while the phone is offline is kept on
// the phone (outbox-core.js, IndexedDB) instead of lost, shown as "waiting to send" in #outbox,
// and sent in order when the network returns: by this page on the "online" event, by the next page
// opened, and, once the driver leaves the page or the phone's screen goes off with steps still
// waiting, by the service worker's Background Sync where the browser has it (it wakes the worker
// when the network is back, even with the app closed). Each step carries its
// form's idempotency key, so nothing is done twice. A step the server refuses (the order was
// reassigned or cancelled meanwhile) stays listed with the reason until the driver dismisses it.
// Online, forms submit as usual.

await import(new URL("./outbox-core.js" + new URL(import.meta.url).search, import.meta.url).href);
const outbox = self.WaybillOutbox;
const region = document.getElementById("outbox");
const texts = (() => { try { return JSON.parse(region?.dataset.texts || "{}"); } catch { return {}; } })();
const sent = [];   // steps sent while this page was open: { key, label, url }
let waiting = 0;   // steps kept and not refused, as last shown
let registration = null;
navigator.serviceWorker?.ready.then((r) => { registration = r; }, () => {});

function el(tag, attributes = {}, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text != null) node.textContent = text;
  return node;
}

async function render() {
  if (!region) return;
  let items = [];
  try { items = await outbox.all(); } catch { /* no IndexedDB (private mode): nothing kept */ }
  const list = region.querySelector("ul");
  const rows = items.map((item) => {
    const li = el("li", { "data-outbox-item": item.state, "data-key": item.key });
    li.append(el("strong", {}, item.label), " · ");
    if (item.state === "refused") {
      li.append(el("span", { class: "error" }, (texts.refused || "%@").replace("%@", item.message || "")), " ");
      const dismiss = el("button", { type: "button", class: "link", "data-dismiss": item.key }, texts.dismiss || "Dismiss");
      li.append(dismiss);
    } else {
      li.append(el("span", {}, item.state === "sending" ? texts.sending : texts.waiting));
    }
    return li;
  });
  for (const done of sent) {
    const li = el("li", { "data-outbox-item": "sent" });
    li.append(el("strong", {}, done.label), " · ", el("span", {}, texts.sent || "sent"), " ");
    li.append(el("a", { href: done.url }, texts.open || "Open"));
    rows.push(li);
  }
  waiting = items.filter((item) => item.state !== "refused").length;
  list.replaceChildren(...rows);
  region.hidden = rows.length === 0;
}

async function flush() {
  if (!navigator.onLine) return;
  try { await outbox.flush(); } catch { /* tried again on the next occasion */ }
}

function heard(detail) {
  if (detail?.type === "sent" && !sent.some((s) => s.key === detail.key)) {
    sent.push(detail);
    // Still on the page the step was made from, and it can load another: go where its form would have led.
    if (detail.page === location.pathname && detail.url && navigator.onLine) {
      location.assign(detail.url);
      return;
    }
  }
  render();
}

self.addEventListener("waybill-outbox", (event) => heard(event.detail));
outbox.channel?.addEventListener("message", (event) => heard(event.data));

region?.addEventListener("click", async (event) => {
  const key = event.target.closest("[data-dismiss]")?.dataset.dismiss;
  if (key) await outbox.remove(key);
});

document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.matches("form[data-outbox]") || event.defaultPrevented) return;
  if (navigator.onLine) return;
  event.preventDefault();
  const data = new FormData(form);
  // An empty file input (no photo taken) is nothing to keep.
  const entries = [...data.entries()].filter(([, value]) => typeof value === "string" || value.size > 0);
  const key = data.get("idempotencyKey") || crypto.randomUUID();
  try {
    await outbox.add({
      key, url: form.dataset.outbox, multipart: form.enctype === "multipart/form-data", entries,
      label: form.dataset.outboxLabel, page: location.pathname,
    });
  } catch {
    return; // nowhere to keep it: leave the form as it is
  }
  for (const control of form.querySelectorAll("button, input, select, textarea")) control.disabled = true;
  form.setAttribute("data-queued", "");
  form.after(el("p", { class: "alert info", role: "status", "data-queued-note": "" }, texts.queued));
});

// Leaving with steps still waiting: the service worker takes over (Background Sync). While the page
// is open it sends them itself, as soon as the network is back.
function handOver() {
  if (waiting > 0) registration?.sync?.register("waybill-outbox").catch(() => {});
}
addEventListener("pagehide", handOver);
document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") handOver(); });
addEventListener("online", flush);
render();
flush();
// A phone that says it is online may still not reach us (a weak signal): try again now and then.
setInterval(async () => {
  try { if ((await outbox.all()).some((item) => item.state !== "refused")) flush(); } catch { /* no IndexedDB */ }
}, 20000);
