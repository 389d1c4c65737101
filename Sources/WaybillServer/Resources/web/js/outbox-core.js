// Waybill's offline queue, shared by the pages (outbox.js imports it) and the service worker
// (sw.js loads it with importScripts for Background Sync): a driver's steps kept in IndexedDB
// while there is no network, then sent in the order they were made. Each carries the form's
// idempotency key, so a step sent twice (by a page and the worker at once, or after an answer
// that was lost) is done once by the server. No import or export: it sets self.WaybillOutbox.
(() => {
  const DB = "waybill";
  const STORE = "outbox";
  const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("waybill-outbox") : null;

  function request(r) {
    return new Promise((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  }

  let opened = null;
  function open() {
    opened ??= new Promise((resolve, reject) => {
      const r = indexedDB.open(DB, 1);
      r.onupgradeneeded = () => r.result.createObjectStore(STORE, { keyPath: "key" });
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => { opened = null; reject(r.error); };
    });
    return opened;
  }

  async function store(mode) {
    return (await open()).transaction(STORE, mode).objectStore(STORE);
  }

  /** Every kept step, oldest first. */
  async function all() {
    const items = await request((await store("readonly")).getAll());
    return items.sort((a, b) => a.at - b.at);
  }

  // Other pages and the worker hear it on the channel; this page (which the channel skips) as an event.
  function changed(detail = { type: "changed" }) {
    channel?.postMessage(detail);
    if (typeof CustomEvent === "function") self.dispatchEvent(new CustomEvent("waybill-outbox", { detail }));
  }

  /** Keeps a step: { key, url, multipart, entries: [[name, string | Blob]], label, page }. */
  async function add(item) {
    await request((await store("readwrite")).put({ ...item, at: item.at ?? Date.now(), state: "waiting" }));
    changed();
  }

  async function update(key, fields) {
    const s = await store("readwrite");
    const item = await request(s.get(key));
    if (item) await request(s.put({ ...item, ...fields }));
    changed();
  }

  async function remove(key) {
    await request((await store("readwrite")).delete(key));
    changed();
  }

  function body(item) {
    if (item.multipart) {
      const form = new FormData();
      for (const [name, value] of item.entries) form.append(name, value);
      return form;
    }
    return new URLSearchParams(item.entries.filter(([, value]) => typeof value === "string"));
  }

  // Sends what waits, in order. A network failure or a server error stops here (tried again on
  // the next occasion); a refusal (the order was reassigned, cancelled…) is kept with the
  // server's reason for the driver to read, and the next step is tried.
  async function sendAll() {
    for (const item of await all()) {
      if (item.state === "refused") continue;
      await update(item.key, { state: "sending" });
      let response;
      try {
        response = await fetch(item.url, {
          method: "POST", credentials: "same-origin", body: body(item),
          headers: { "Idempotency-Key": item.key, Accept: "application/json" },
        });
      } catch {
        await update(item.key, { state: "waiting" });
        return false;
      }
      if (response.ok) {
        const answer = await response.json().catch(() => ({}));
        await request((await store("readwrite")).delete(item.key));
        changed({ type: "sent", key: item.key, label: item.label, page: item.page, url: answer.url });
        continue;
      }
      if (response.status >= 500 || response.status === 408 || response.status === 429) {
        await update(item.key, { state: "waiting" });
        return false;
      }
      const answer = await response.json().catch(() => null);
      await update(item.key, { state: "refused", message: answer?.error?.message || `${response.status}` });
    }
    return true;
  }

  /** Sends what waits; one sender at a time across pages and the worker (Web Locks where they exist). */
  function flush() {
    const locks = self.navigator?.locks;
    return locks ? locks.request("waybill-outbox", sendAll) : sendAll();
  }

  self.WaybillOutbox = { all, add, remove, flush, channel };
})();
