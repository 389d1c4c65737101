// Waybill driver position sharing: <input type="checkbox" data-share-position> puts the driver on
// duty and streams geolocation readings to POST /app/positions (at most one request a second,
// buffered and retried until acknowledged); unchecking flushes and goes off duty.
// Status text comes from the data-text-* attributes of [data-share-state].

const toggle = document.querySelector("input[type=checkbox][data-share-position]");
const stateEl = document.querySelector("[data-share-state]");
const csrf = () => document.querySelector('meta[name="csrf-token"]')?.content ?? "";
const MAX_BATCH = 500;
const MAX_BUFFER = 20000;

let watchId = null;
let buffer = [];          // readings not yet acknowledged, oldest first
let lastTimestamp = -Infinity;
let inflight = null;      // the request being sent, if any
let timer = null;
let nextAllowed = 0;      // no request to /app/positions before this time (ms)
let backoff = 1000;
let failing = false;      // the last request to /app/positions failed (network or server)
let ops = Promise.resolve();

function show(state) {
  if (!stateEl) return;
  const text = stateEl.dataset["text" + state[0].toUpperCase() + state.slice(1)];
  if (text != null) stateEl.textContent = text;
  stateEl.dataset.state = state;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function post(url, body) {
  return fetch(url, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
    body: JSON.stringify(body),
  });
}

/** "ok" | "retry" (network, 5xx) | "fatal" (refused) */
async function setDuty(onDuty) {
  // Travellers share from a shipment's page only: they have no duty to go on.
  if (toggle?.hasAttribute("data-no-duty")) return "ok";
  try {
    const res = await post("/app/duty", { onDuty });
    if (res.ok) return "ok";
    return res.status >= 500 || res.status === 429 || res.status === 408 ? "retry" : "fatal";
  } catch {
    return "retry";
  }
}

function nextBackoff() {
  const wait = backoff * (0.8 + Math.random() * 0.4);
  backoff = Math.min(backoff * 2, 30000);
  return wait;
}

function retryAfter(res) {
  const value = res.headers.get("Retry-After");
  if (!value) return nextBackoff();
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(1000, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(1000, date - Date.now()) : nextBackoff();
}

function reading(position) {
  const c = position.coords;
  const out = { latitude: c.latitude, longitude: c.longitude };
  for (const key of ["accuracy", "heading", "speed"]) {
    if (typeof c[key] === "number" && Number.isFinite(c[key])) out[key] = c[key];
  }
  out.recordedAt = new Date(position.timestamp).toISOString();
  return out;
}

// Sends the oldest batch once. Resolves to the delay before the next attempt (0 = go on),
// or null when sharing must stop (the server refused us for good).
function sendOnce() {
  inflight ??= (async () => {
    const batch = buffer.slice(0, MAX_BATCH);
    if (!batch.length) return 0;
    nextAllowed = Date.now() + 1000;
    try {
      const res = await post("/app/positions", { positions: batch });
      if (res.ok || res.status === 422 || res.status === 400 || res.status === 413) {
        // Acknowledged, or refused as impossible: either way this batch is done with.
        buffer.splice(0, batch.length);
        backoff = 1000;
        failing = false;
        if (watchId !== null) show("on");
        return 0;
      }
      if (res.status === 429) return retryAfter(res);
      if (res.status === 409) {
        const duty = await setDuty(true);
        return duty === "ok" ? 0 : duty === "fatal" ? null : nextBackoff();
      }
      if (res.status === 401 || res.status === 403) return null;
    } catch {
      // network error: keep the batch
    }
    failing = true;
    if (watchId !== null) show("error");
    return nextBackoff();
  })().finally(() => { inflight = null; });
  return inflight;
}

function schedule(delay = 0) {
  if (timer || inflight || !buffer.length || watchId === null) return;
  const wait = Math.max(delay, nextAllowed - Date.now(), 0);
  timer = setTimeout(async () => {
    timer = null;
    const next = await sendOnce();
    if (next === null) return fail();
    schedule(next);
  }, wait);
}

function onPosition(position) {
  if (watchId === null) return;
  // The same fix can be reported again; never send a point twice.
  if (!(position.timestamp > lastTimestamp)) return;
  lastTimestamp = position.timestamp;
  buffer.push(reading(position));
  if (buffer.length > MAX_BUFFER) buffer.splice(0, buffer.length - MAX_BUFFER);
  show(failing ? "error" : "on");
  schedule();
}

function onPositionError(error) {
  if (error.code === 1) {
    // PERMISSION_DENIED
    if (toggle) toggle.checked = false;
    run(() => stop("denied"));
  } else {
    show("error"); // unavailable or timeout: the watch goes on
  }
}

async function start() {
  if (watchId !== null) return;
  if (!("geolocation" in navigator)) { if (toggle) toggle.checked = false; show("error"); return; }
  const permission = await navigator.permissions?.query({ name: "geolocation" }).catch(() => null);
  if (permission?.state === "denied") { if (toggle) toggle.checked = false; show("denied"); return; }
  show("waiting");
  const duty = await setDuty(true);
  if (duty === "fatal") { if (toggle) toggle.checked = false; show("error"); return; }
  // On a network failure we start anyway: /app/positions answers 409 and duty is sent again.
  if (!toggle?.checked) return;
  watchId = navigator.geolocation.watchPosition(onPosition, onPositionError, { enableHighAccuracy: true, maximumAge: 5000 });
}

async function stop(finalState = "off") {
  if (watchId !== null) navigator.geolocation.clearWatch(watchId);
  watchId = null;
  clearTimeout(timer);
  timer = null;
  // Flush what is left, a few attempts at most.
  for (let tries = 0; buffer.length && tries < 3; ) {
    if (inflight) await inflight;
    const wait = nextAllowed - Date.now();
    if (wait > 0) await sleep(wait);
    const next = await sendOnce();
    if (next === null) break;
    if (next > 0) { tries++; await sleep(Math.min(next, 5000)); }
  }
  const duty = await setDuty(false);
  show(duty === "ok" ? finalState : finalState === "denied" ? "denied" : "error");
}

function fail() {
  if (toggle) toggle.checked = false;
  if (watchId !== null) navigator.geolocation.clearWatch(watchId);
  watchId = null;
  clearTimeout(timer);
  timer = null;
  show("error");
}

// Start and stop run one after the other, never interleaved.
function run(op) {
  ops = ops.then(op, op);
  return ops;
}

if (toggle) {
  toggle.addEventListener("change", () => run(() => (toggle.checked ? start() : stop("off"))));
  if (toggle.checked) run(start);
}
