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
