// Waybill maps: turns <div class="map" data-map='{…}'> into a Leaflet map, keeps driver markers
// moving from "waybill:live" events, and lets forms pick a point ([data-map-pick]).
// Leaflet is loaded on demand from /assets/vendor/leaflet/; if that fails the server-rendered
// fallback inside each div stays as it is.
// Rule for every island: build DOM from text, never innerHTML. Names come from people: Leaflet sets
// a string tooltip as HTML, so tooltips get an element whose textContent holds the name.

const VENDOR = "/assets/vendor/leaflet/";
const COLOURS = { pickup: "#1a7f37", dropoff: "#c62828", driver: "#0b5cad", pin: "#d35400", approx: "#7a7a7a" };
const maps = []; // { div, map, config, markers: Map<id, {layer, kind}>, trail }

let leaflet = null;
function loadLeaflet() {
  if (window.L) return Promise.resolve(window.L);
  leaflet ??= Promise.all([
    new Promise((resolve, reject) => {
      const link = Object.assign(document.createElement("link"), { rel: "stylesheet", href: VENDOR + "leaflet.css" });
      link.onload = resolve;
      link.onerror = reject;
      document.head.append(link);
    }),
    new Promise((resolve, reject) => {
      const script = Object.assign(document.createElement("script"), { src: VENDOR + "leaflet.js" });
      script.onload = () => (window.L ? resolve() : reject(new Error("Leaflet missing")));
      script.onerror = reject;
      document.head.append(script);
    }),
  ]).then(() => window.L);
  return leaflet;
}

const lower = (v) => String(v ?? "").toLowerCase();
const validPoint = (lat, lng) => Number.isFinite(lat) && Number.isFinite(lng) && Math.abs(lat) <= 90 && Math.abs(lng) <= 180;

// A draggable pin needs a real marker; its look is set through the CSSOM (CSP forbids style attributes).
function pinIcon(L, kind) {
  const el = document.createElement("span");
  Object.assign(el.style, {
    display: "block", width: "22px", height: "22px", borderRadius: "50%", boxSizing: "border-box",
    background: COLOURS[kind] ?? COLOURS.pin, border: "3px solid #fff", boxShadow: "0 1px 4px rgba(0,0,0,.6)",
  });
  return L.divIcon({ html: el, className: "map-pin map-pin-" + kind, iconSize: [22, 22], iconAnchor: [11, 11] });
}

function label(layer, text, kind) {
  const el = document.createElement("span");
  el.textContent = String(text);
  return layer.bindTooltip(el, { permanent: true, direction: "top", offset: [0, -8], className: "map-label map-label-" + kind });
}

function addMarker(state, { id, lat, lng, label: text, kind }) {
  const layer = window.L.circleMarker([lat, lng], {
    radius: kind === "driver" ? 8 : 9, color: "#fff", weight: 2, fillColor: COLOURS[kind] ?? COLOURS.pin, fillOpacity: 0.95,
  }).addTo(state.map);
  if (text) label(layer, text, kind);
  state.markers.set(lower(id || kind), { layer, kind });
}

function setDriverAttributes(div, lat, lng) {
  div.dataset.driverLat = String(lat);
  div.dataset.driverLng = String(lng);
}

function initMap(L, div) {
  let config;
  try { config = JSON.parse(div.dataset.map); } catch { return; }
  div.replaceChildren();
  const map = L.map(div, { scrollWheelZoom: false });
  L.tileLayer(config.tiles || "https://tile.openstreetmap.org/{z}/{x}/{y}.png", {
    attribution: config.attribution ?? "© OpenStreetMap contributors", maxZoom: 19,
  }).addTo(map);
  const state = { div, map, config, markers: new Map(), trail: null };
  maps.push(state);

  const points = [];
  for (const m of config.markers ?? []) {
    if (!validPoint(m.lat, m.lng)) continue;
    addMarker(state, m);
    points.push([m.lat, m.lng]);
    if (m.kind === "driver") setDriverAttributes(div, m.lat, m.lng);
  }
  const trail = (config.trail ?? []).filter((p) => Array.isArray(p) && validPoint(p[0], p[1]));
  if (config.order || trail.length) {
    state.trail = L.polyline(trail, { color: COLOURS.driver, weight: 4, opacity: 0.7, dashArray: "6 8", interactive: false }).addTo(map);
    points.push(...trail);
  }
  // Planned routes: one line each, coloured in turn.
  const PALETTE = ["#0b5cad", "#c62828", "#1a7f37", "#6a1b9a", "#d35400", "#00838f", "#5d4037", "#ad1457"];
  (config.routes ?? []).forEach((line, i) => {
    const path = (Array.isArray(line) ? line : []).filter((p) => Array.isArray(p) && validPoint(p[0], p[1]));
    if (path.length < 2) return;
    L.polyline(path, { color: PALETTE[i % PALETTE.length], weight: 4, opacity: 0.75, interactive: false }).addTo(map);
    points.push(...path);
  });
  const pick = div.dataset.mapPick;
  const picked = pick ? setupPick(L, state, pick) : null;
  if (picked) points.push(picked);

  if (points.length >= 2) map.fitBounds(L.latLngBounds(points), { padding: [32, 32], maxZoom: 16 });
  else if (points.length === 1 && !config.center) map.setView(points[0], config.zoom ?? 15);
  else map.setView(config.center ?? [0, 0], config.zoom ?? (config.center ? 13 : 2));
  div.dataset.ready = "1";
}

// ---- Pin picking ------------------------------------------------------------------------------

function setupPick(L, state, name) {
  const { div, map } = state;
  const scope = div.closest("form") ?? document;
  const find = (selector) => scope.querySelector(selector) ?? document.querySelector(selector);
  const latInput = find(`input[data-pick-lat="${CSS.escape(name)}"]`);
  const lngInput = find(`input[data-pick-lng="${CSS.escape(name)}"]`);
  const clear = find(`[data-pick-clear="${CSS.escape(name)}"]`);
  if (!latInput || !lngInput) return null;
  const kind = name === "pickup" || name === "dropoff" ? name : "pin";
  let marker = null;

  const write = (lat, lng) => {
    latInput.value = lat === "" ? "" : lat.toFixed(6);
    lngInput.value = lng === "" ? "" : lng.toFixed(6);
    for (const input of [latInput, lngInput]) input.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const place = (latlng, fill) => {
    const point = L.latLng(latlng).wrap();
    if (!marker) {
      marker = L.marker(point, { draggable: true, keyboard: false, icon: pinIcon(L, kind) }).addTo(map);
      marker.on("dragend", () => {
        const p = marker.getLatLng().wrap();
        write(p.lat, p.lng);
      });
    } else {
      marker.setLatLng(point);
    }
    if (fill) write(point.lat, point.lng);
  };

  map.on("click", (e) => place(e.latlng, true));
  // Keyboard: the map is focusable; Enter drops the pin at the centre (arrow keys pan).
  div.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.target === div) { e.preventDefault(); place(map.getCenter(), true); }
  });
  if (clear) {
    clear.hidden = false;
    clear.addEventListener("click", () => {
      if (marker) { marker.remove(); marker = null; }
      write("", "");
    });
  }
  const lat = parseFloat(latInput.value);
  const lng = parseFloat(lngInput.value);
  if (validPoint(lat, lng)) {
    place([lat, lng], false);
    return [lat, lng];
  }
  return null;
}

// ---- Live updates -------------------------------------------------------------------------------

function concerns(state, event) {
  const order = lower(state.config.order);
  if (!order) return false;
  return lower(event.data?.orderId) === order || lower(event.topic) === "order:" + order;
}

function removeDrivers(state, driverId) {
  for (const [id, m] of state.markers) {
    if (m.kind !== "driver") continue;
    if (driverId != null && id !== "driver:" + lower(driverId)) continue;
    m.layer.remove();
    state.markers.delete(id);
  }
}

function onLocation(state, event) {
  const d = event.data ?? {};
  const lat = d.latitude ?? d.lat;
  const lng = d.longitude ?? d.lng;
  if (!validPoint(lat, lng)) return;
  const fleet = state.config.fleet === true;
  if (!fleet && !concerns(state, event)) return;
  const id = d.driverId ? "driver:" + lower(d.driverId) : "driver";
  let entry = state.markers.get(id);
  if (!entry && !fleet) {
    // An order map has one driver: take over the server-rendered driver marker, whatever its id.
    const found = [...state.markers].find(([, m]) => m.kind === "driver");
    if (found) { state.markers.delete(found[0]); state.markers.set(id, found[1]); entry = found[1]; }
  }
  if (entry) {
    entry.layer.setLatLng([lat, lng]);
    if (d.driverFirstName && !entry.layer.getTooltip()) label(entry.layer, d.driverFirstName, "driver");
  } else {
    addMarker(state, { id, lat, lng, label: d.driverFirstName, kind: "driver" });
  }
  if (state.trail && !fleet) state.trail.addLatLng([lat, lng]);
  setDriverAttributes(state.div, lat, lng);
}

function onLive(e) {
  const event = e.detail ?? {};
  for (const state of maps) {
    if (!state.div.isConnected) continue;
    if (event.type === "location") onLocation(state, event);
    else if (event.type === "duty" && state.config.fleet === true && event.data?.onDuty === false) removeDrivers(state, event.data.driverId);
    else if (event.type === "status" && concerns(state, event) && (state.config.ended || []).includes(event.data?.status)) removeDrivers(state, null);
  }
}

// ---- Start --------------------------------------------------------------------------------------

async function start() {
  const divs = [...document.querySelectorAll("[data-map]")].filter((div) => div.dataset.ready !== "1" && !maps.some((s) => s.div === div));
  if (!divs.length) return;
  let L;
  try { L = await loadLeaflet(); } catch { leaflet = null; return; }
  for (let i = maps.length - 1; i >= 0; i--) if (!maps[i].div.isConnected) maps.splice(i, 1)[0].map.remove();
  for (const div of divs) {
    if (!div.isConnected || div.dataset.ready === "1") continue;
    try { initMap(L, div); } catch (err) { console.error("map", err); }
  }
}

document.addEventListener("waybill:live", onLive);
document.addEventListener("waybill:regions-updated", start);
start();
