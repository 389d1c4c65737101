// Waybill service worker (scope "/"): an offline page for navigations, stale-while-revalidate for
// /assets/, a driver's steps kept offline sent by Background Sync, and Web Push notifications. Nothing under /app/ or /api/, no POST and no page of a
// signed-in person is ever cached. Bump VERSION when the shell changes.

importScripts("/assets/js/outbox-core.js");

// The bundle's hash, written in by the server: every deployment that changes the app is a new
// worker, which waits until the person accepts the update (ui.js's prompt).
const VERSION = "dev";
const SHELL = `waybill-shell-${VERSION}`;
const ASSETS = `waybill-assets-${VERSION}`;
const SHELL_URLS = [
  "/offline",
  "/assets/app.css",
  "/assets/js/live.js",
  "/assets/js/ui.js",
  "/assets/js/map.js",
  "/assets/js/signature.js",
  "/assets/js/position.js",
  "/assets/js/areas.js",
  "/assets/js/picture.js",
  "/assets/js/outbox.js",
  "/assets/js/outbox-core.js",
  "/manifest.webmanifest",
  "/assets/icons/icon.svg",
  "/assets/icons/icon-192.png",
];

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(SHELL);
    await cache.addAll(SHELL_URLS.map((url) => new Request(url, { cache: "reload", credentials: "omit" })));
    // The first install takes over at once; an update waits for the person's yes.
    if (!self.registration.active) await self.skipWaiting();
  })());
});

self.addEventListener("message", (event) => {
  if (event.data?.type === "skip-waiting") self.skipWaiting();
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    const keep = new Set([SHELL, ASSETS]);
    for (const key of await caches.keys()) {
      if (key.startsWith("waybill-") && !keep.has(key)) await caches.delete(key);
    }
    await self.registration.navigationPreload?.enable();
    await self.clients.claim();
  })());
});

async function networkFirstPage(event) {
  try {
    const preload = await event.preloadResponse;
    return preload ?? await fetch(event.request);
  } catch {
    return (await caches.match("/offline", { cacheName: SHELL }))
      ?? new Response("Offline", { status: 503, headers: { "Content-Type": "text/plain; charset=utf-8" } });
  }
}

// Pages ask for /assets/…?v=<version>: a cached copy of the same version is served at once and
// refreshed behind; another version goes to the network, and only offline falls back to
// whatever copy of that path is cached (the shell holds them without the query).
async function staleWhileRevalidate(event) {
  const request = event.request;
  const cache = await caches.open(ASSETS);
  const network = fetch(request).then((response) => {
    if (response.ok && response.type === "basic" && !response.headers.get("Cache-Control")?.includes("no-store")) {
      const copy = response.clone();
      event.waitUntil((async () => {
        // One copy per path: drop the other versions.
        for (const old of await cache.keys(request, { ignoreSearch: true })) {
          if (old.url !== request.url) await cache.delete(old);
        }
        await cache.put(request, copy);
      })().catch(() => {}));
    }
    return response;
  });
  const cached = (await cache.match(request)) ?? (await caches.match(request, { cacheName: SHELL }));
  if (cached) {
    event.waitUntil(network.catch(() => {}));
    return cached;
  }
  try {
    return await network;
  } catch (error) {
    const any = (await cache.match(request, { ignoreSearch: true })) ?? (await caches.match(request, { cacheName: SHELL, ignoreSearch: true }));
    if (any) return any;
    throw error;
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/app/") || url.pathname.startsWith("/api/")) return;
  if (request.headers.has("X-Live-Refresh")) return;
  if (request.mode === "navigate") {
    // Pages are never cached: they can belong to a signed-in person.
    event.respondWith(networkFirstPage(event));
    return;
  }
  if (url.pathname.startsWith("/assets/")) {
    event.respondWith(staleWhileRevalidate(event));
    return;
  }
  if (url.pathname === "/manifest.webmanifest") {
    event.respondWith(fetch(request).catch(async () => (await caches.match(request, { cacheName: SHELL })) ?? Response.error()));
  }
});

// ---- A driver's steps kept offline (outbox-core.js): Background Sync sends them ------------------

self.addEventListener("sync", (event) => {
  // Still waiting (no network yet, or the server is down): failing asks the browser to retry later.
  if (event.tag === "waybill-outbox") {
    event.waitUntil(self.WaybillOutbox.flush().then((done) => { if (!done) throw new Error("steps still waiting"); }));
  }
});

// ---- Web Push -----------------------------------------------------------------------------------

self.addEventListener("push", (event) => {
  let title = "Waybill";
  let body = "";
  let url;
  if (event.data) {
    let payload = null;
    try { payload = event.data.json(); } catch { /* plain text */ }
    if (payload && typeof payload === "object") {
      title = payload.title || title;
      body = payload.body ?? "";
      // The page it is about (the delivery, the conversation), as the server named it.
      url = payload.data?.path;
    } else {
      body = event.data.text();
    }
  }
  event.waitUntil(Promise.all([
    self.registration.showNotification(title, {
      body,
      icon: "/assets/icons/icon-192.png",
      badge: "/assets/icons/icon-192.png",
      data: { url },
    }),
    // Something unread: the app's icon says so (the pages set the exact number when opened).
    self.navigator.setAppBadge?.().catch(() => {}),
  ]));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = new URL(event.notification.data?.url || "/notifications", self.location.origin);
  // Only ever open pages of this site.
  const href = target.origin === self.location.origin ? target.href : new URL("/notifications", self.location.origin).href;
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const exact = windows.find((c) => c.url === href);
    if (exact) return exact.focus();
    const any = windows.find((c) => "navigate" in c && new URL(c.url).origin === self.location.origin);
    if (any) {
      await any.focus();
      return any.navigate(href).catch(() => self.clients.openWindow(href));
    }
    return self.clients.openWindow(href);
  })());
});
