// Waybill live channel: keeps a WebSocket open for the page's topics, re-dispatches every event
// as a "waybill:live" CustomEvent, refreshes [data-live-refresh] regions, updates the unread badges
// (notifications, and messages from `unread` events).
// The page works without it; this only makes it update by itself.

const topics = (document.querySelector('meta[name="live-topics"]')?.content ?? "").split(/\s+/).filter(Boolean);
const csrf = () => document.querySelector('meta[name="csrf-token"]')?.content ?? "";

// The newest event the server had seen when it rendered the page: anything after it is replayed,
// so an event that lands while the socket opens is not lost.
const since = parseInt(document.querySelector('meta[name="live-since"]')?.content ?? "", 10);
let lastId = Number.isSafeInteger(since) && since > 0 ? since : null;
let delay = 1000;
let stopped = false;
let socket = null;
let retryTimer = null;
let connecting = false;
let refreshedAfterGap = false; // one full refresh per connection when the server lost events

function setState(state) {
  // state: "live" | "reconnecting" | "offline"
  const key = "text" + state[0].toUpperCase() + state.slice(1);
  for (const el of document.querySelectorAll("[data-live-state]")) {
    const text = el.dataset[key];
    if (text != null) el.textContent = text;
    el.dataset.liveStatus = state;
  }
}

function stop(state) {
  stopped = true;
  clearTimeout(retryTimer);
  setState(state);
}

function scheduleReconnect() {
  if (stopped) return;
  setState("reconnecting");
  clearTimeout(retryTimer);
  // Exponential backoff, 1 s doubling to 30 s, with ±25 % jitter.
  const wait = delay * (0.75 + Math.random() * 0.5);
  delay = Math.min(delay * 2, 30000);
  retryTimer = setTimeout(connect, wait);
}

function socketURL(url) {
  const u = new URL(url, location.href);
  if (u.protocol === "http:") u.protocol = "ws:";
  else if (u.protocol === "https:") u.protocol = "wss:";
  return u.href;
}

async function connect() {
  if (stopped || connecting) return;
  connecting = true;
  try { await open(); } finally { connecting = false; }
}

async function open() {
  let ticket;
  try {
    const res = await fetch("/app/live-ticket", {
      method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrf() },
    });
    if (res.status === 401 || res.status === 403) return stop("offline");
    if (!res.ok) throw new Error("ticket " + res.status);
    ticket = await res.json();
  } catch {
    return scheduleReconnect();
  }
  if (stopped) return;
  let ws;
  try {
    ws = new WebSocket(socketURL(ticket.url));
  } catch {
    return scheduleReconnect();
  }
  socket = ws;
  ws.onopen = () => {
    refreshedAfterGap = false;
    for (const topic of topics) {
      const command = { type: "subscribe", topic };
      if (lastId !== null) command.since = lastId;
      ws.send(JSON.stringify(command));
    }
  };
  ws.onmessage = (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    if (event && typeof event === "object") receive(event);
  };
  ws.onclose = () => {
    if (socket === ws) socket = null;
    scheduleReconnect();
  };
}

function receive(event) {
  switch (event.type) {
    case "subscribed":
      delay = 1000;
      setState("live");
      if (event.complete === false && !refreshedAfterGap) {
        // Events were lost while we were away: fetch the current state once.
        refreshedAfterGap = true;
        queueRefresh(null);
      }
      return;
    case "error":
      if (event.code === "session_ended") {
        stop("offline");
        socket?.close();
        location.assign("/login");
      }
      return;
    case "unsubscribed":
    case "pong":
      return;
  }
  if (typeof event.id === "number" && (lastId === null || event.id > lastId)) lastId = event.id;
  if (event.type === "notification") bumpUnread();
  if (event.type === "unread" && event.data) setUnreadMessages(event.data.total);
  queueRefresh(event.type);
  document.dispatchEvent(new CustomEvent("waybill:live", { detail: event }));
}

function bumpUnread() {
  for (const el of document.querySelectorAll("[data-unread-count]")) {
    const n = parseInt(el.textContent.trim(), 10) || 0;
    el.textContent = String(n + 1);
    el.hidden = false;
  }
}

function setUnreadMessages(total) {
  const n = Number.isFinite(total) && total > 0 ? Math.floor(total) : 0;
  for (const el of document.querySelectorAll("[data-messages-unread]")) {
    el.textContent = String(n);
    el.hidden = n === 0;
  }
}

// ---- Live regions -------------------------------------------------------------------------

let pendingTypes = new Set();
let refreshAll = false;
let refreshTimer = null;
let refreshing = false;

function regionWants(el, type) {
  return (el.dataset.liveRefresh ?? "").split(/\s+/).includes(type);
}

/** type null = refresh every region. */
function queueRefresh(type) {
  if (type === null) refreshAll = true;
  else if ([...document.querySelectorAll("[data-live-refresh]")].some((el) => regionWants(el, type))) pendingTypes.add(type);
  else return;
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 250);
}

function isTyping(region) {
  const active = document.activeElement;
  if (!active || active === document.body || !region.contains(active)) return false;
  return active.matches("input:not([type=button], [type=submit], [type=reset]), textarea, select") || active.isContentEditable;
}

async function refresh() {
  if (refreshing) { refreshTimer = setTimeout(refresh, 250); return; }
  const all = refreshAll;
  const types = pendingTypes;
  refreshAll = false;
  pendingTypes = new Set();
  const regions = [...document.querySelectorAll("[data-live-refresh][id]")]
    .filter((el) => all || [...types].some((t) => regionWants(el, t)));
  if (!regions.length) return;
  refreshing = true;
  try {
    const res = await fetch(location.href, { credentials: "same-origin", headers: { "X-Live-Refresh": "1" } });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    let replaced = false;
    for (const region of regions) {
      if (!region.isConnected || isTyping(region)) continue;
      const fresh = doc.getElementById(region.id);
      if (!fresh) continue;
      region.replaceWith(document.importNode(fresh, true));
      replaced = true;
    }
    if (replaced) document.dispatchEvent(new CustomEvent("waybill:regions-updated"));
  } catch {
    // Offline or the page went away: the next event will try again.
  } finally {
    refreshing = false;
  }
}

if (topics.length) {
  connect();
  // Come back quickly when the network returns instead of waiting out the backoff.
  addEventListener("online", () => {
    if (!stopped && !socket && !connecting) { clearTimeout(retryTimer); delay = 1000; connect(); }
  });
}
