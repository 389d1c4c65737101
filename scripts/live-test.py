#!/usr/bin/env python3
"""Two `waybill serve` processes on one PostgreSQL database share live events.

usage: live-test.py PATH/TO/waybill postgres://…

Starts process A and process B on free ports (as behind a load balancer), then: a customer
watches an order over the live channel of B while the driver reports positions to A and a
manager on A watches the fleet; a status change made through B reaches the watcher on A; a
public tracking-link viewer on A sees the pickup made through B. Needs `websockets` (PyPI).
"""
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone

import websockets

binary, database = sys.argv[1], sys.argv[2]
workdir = tempfile.mkdtemp(prefix="waybill-live-")
env = dict(os.environ, LOG_LEVEL="info", BCRYPT_COST="10", DATABASE_URL=database)
passed = failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"  ok   {name}")
    else:
        failed += 1
        print(f"  FAIL {name} {detail}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, (json.loads(raw) if raw[:1] == b"{" else raw.decode())


def start(port, name):
    log = open(os.path.join(workdir, f"{name}.log"), "w")
    process = subprocess.Popen([binary, "serve", "--port", str(port)], cwd=workdir, env=dict(env, PUBLIC_URL=f"http://127.0.0.1:{port}"),
                               stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if call(base, "GET", "/health")[0] == 200:
                return process, base
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{name} did not start; see {log.name}")


def now_iso(offset=0.0):
    return datetime.fromtimestamp(time.time() + offset, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def open_live(base, token=None, tracking=None):
    status, body = call(base, "POST", "/api/v1/live/ticket", {"trackingToken": tracking} if tracking else None, token=token)
    assert status == 201, body
    return await websockets.connect(body["url"])


async def expect(socket, predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            message = json.loads(await asyncio.wait_for(socket.recv(), timeout=max(0.01, deadline - time.monotonic())))
        except asyncio.TimeoutError:
            break
        if predicate(message):
            return message
    return None


async def scenario(a, b, tokens, order_id, tracking):
    customer_on_b = await open_live(b, tokens["customer"])
    manager_on_a = await open_live(a, tokens["manager"])
    viewer_on_a = await open_live(a, tracking=tracking)
    await customer_on_b.send(json.dumps({"type": "subscribe", "topic": f"order:{order_id}"}))
    await manager_on_a.send(json.dumps({"type": "subscribe", "topic": "fleet"}))
    await viewer_on_a.send(json.dumps({"type": "subscribe", "topic": f"tracking:{tracking}"}))
    for socket in (customer_on_b, manager_on_a, viewer_on_a):
        reply = await expect(socket, lambda m: m["type"] in ("subscribed", "error"))
        check(f"subscribed ({reply and reply.get('topic', '')[:14]})", reply is not None and reply["type"] == "subscribed", str(reply))

    sent = time.time()
    status, body = call(a, "POST", "/api/v1/drivers/me/locations",
                        {"positions": [{"latitude": 47.3601, "longitude": 8.5301, "recordedAt": now_iso()}]}, token=tokens["driver"])
    check("the driver reports a position to process A", status == 200 and body["accepted"] == 1, str(body))
    seen = await expect(customer_on_b, lambda m: m["type"] == "location")
    check("the customer connected to process B sees it", seen is not None and abs(seen["data"]["latitude"] - 47.3601) < 1e-9, str(seen))
    if seen:
        print(f"       (arrived {1000 * (time.time() - sent):.0f} ms after the report was sent)")
    fleet = await expect(manager_on_a, lambda m: m["type"] == "location")
    check("the manager on process A sees it on the fleet", fleet is not None, str(fleet))

    status, body = call(b, "POST", f"/api/v1/orders/{order_id}/pickup", {"cashCollected": tokens["price"]}, token=tokens["driver"])
    check("the driver picks up through process B", status == 200 and body["status"] == "in_transit", str(body)[:300])
    public = await expect(viewer_on_a, lambda m: m["type"] == "status")
    check("the tracking-link viewer on process A sees the pickup, without ids",
          public is not None and public["data"] == {"status": "in_transit", "at": public["data"].get("at")}, str(public))
    status_b = await expect(customer_on_b, lambda m: m["type"] == "status")
    check("the customer on process B sees it too", status_b is not None and status_b["data"]["status"] == "in_transit", str(status_b))

    # Reconnecting to the other process, the customer asks for what it missed.
    last = status_b["id"] if status_b else 0
    await customer_on_b.close()
    status, body = call(b, "POST", "/api/v1/drivers/me/locations",
                        {"positions": [{"latitude": 47.3603, "longitude": 8.5303, "recordedAt": now_iso(1)}]}, token=tokens["driver"])
    again_on_a = await open_live(a, tokens["customer"])
    await again_on_a.send(json.dumps({"type": "subscribe", "topic": f"order:{order_id}", "since": last}))
    missed = await expect(again_on_a, lambda m: m["type"] == "location")
    check("reconnected to process A, the customer gets the position it missed", missed is not None and missed["id"] > last, str(missed))
    for socket in (again_on_a, manager_on_a, viewer_on_a):
        await socket.close()


def balanced(bases, method, path, body=None, token=None):
    """A load balancer's retry (nginx `proxy_next_upstream error`): a process that refuses the
    connection or drops it before answering is skipped for the next one."""
    for base in bases:
        try:
            return call(base, method, path, body, token)
        except OSError:
            continue
    return None, "no process answered"


async def rolling_restart(ports, tokens, order_id):
    """docs/deploy.md's restart: SIGTERM one process, start it again, then the other, while a client
    keeps calling through a balancer and a customer follows the order live. Nothing fails, nothing
    is missed."""
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    stop = asyncio.Event()
    answers = {"ok": 0, "failed": []}

    async def client():
        n = 0
        while not stop.is_set():
            n += 1
            status, body = await asyncio.to_thread(balanced, bases, "POST", "/api/v1/drivers/me/locations",
                                                   {"positions": [{"latitude": 47.36 + n * 1e-5, "longitude": 8.53, "recordedAt": now_iso(1.5)}]},
                                                   tokens["driver"])
            if status == 200:
                answers["ok"] += 1
            else:
                answers["failed"].append((status, str(body)[:120]))
            await asyncio.sleep(0.3)  # drivers report at most a few a second (closer ones are ignored)

    watcher = await open_live(bases[1], tokens["customer"])
    await watcher.send(json.dumps({"type": "subscribe", "topic": f"order:{order_id}"}))
    await expect(watcher, lambda m: m["type"] == "subscribed")
    last_seen = 0
    running = asyncio.create_task(client())
    for index in (0, 1):
        old = processes[index]
        old.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(old.wait, 20)
        check(f"process {'AB'[index]} stops on SIGTERM with exit 0", code == 0, f"exit {code}")
        if index == 1:
            # The watcher's process went away: it reconnects to the other and resumes.
            async for raw in watcher:
                message = json.loads(raw)
                last_seen = max(last_seen, message.get("id") or 0)
            watcher = await open_live(bases[0], tokens["customer"])
            await watcher.send(json.dumps({"type": "subscribe", "topic": f"order:{order_id}", "since": last_seen}))
        await asyncio.sleep(0.5)  # the balancer sends everything to the other process meanwhile
        migrated = await asyncio.to_thread(subprocess.run, [binary, "migrate", "--yes"], cwd=workdir, env=env, capture_output=True, timeout=300)
        check(f"process {'AB'[index]}'s migrate before it starts again", migrated.returncode == 0)
        processes[index], _ = await asyncio.to_thread(start, ports[index], "ab"[index] + "2")
    await asyncio.sleep(0.3)
    stop.set()
    await running
    check(f"no call failed through the balancer during the restarts ({answers['ok']} positions reported)",
          not answers["failed"] and answers["ok"] >= 5, str(answers["failed"][:3]))
    # Every position reported after the watcher's last one reaches it, once, in order.
    received = []
    while True:
        message = await expect(watcher, lambda m: m["type"] == "location", timeout=2.0)
        if message is None:
            break
        received.append(message["id"])
    check("the customer, reconnected to the restarted process, got every position it missed, once and in order",
          received and received == sorted(set(received)) and received[0] > last_seen, f"{len(received)} after {last_seen}: {received}")
    await watcher.close()


processes = []
try:
    print(f"live test: two processes on {database.split('@')[-1]} in {workdir}")
    migrated = subprocess.run([binary, "migrate", "--yes"], cwd=workdir, env=env, capture_output=True, text=True, timeout=300)
    check("waybill migrate", migrated.returncode == 0, migrated.stderr[-300:])
    for role in ("manager", "driver"):
        made = subprocess.run([binary, "user", "create", "--role", role, "--email", f"{role}@live.example", "--first-name", role.title(),
                               "--last-name", "Live", "--password", "a-very-good-password"], cwd=workdir, env=env, capture_output=True, text=True)
        check(f"a {role} account", made.returncode == 0, made.stderr[-300:])
    process_a, a = start(free_port(), "a")
    process_b, b = start(free_port(), "b")
    processes = [process_a, process_b]
    check("process A and process B serve", True)

    form = {"firstName": "Ada", "lastName": "Muster", "address": "Bahnhofstrasse 1", "postalCode": "8001", "city": "Zürich",
            "email": "ada@live.example", "password": "correct-horse-battery", "isCompany": False}
    call(a, "POST", "/api/v1/auth/register", form)
    code = None
    for _ in range(100):
        found = re.findall(r"To: ada@live\.example\nSubject: Your Waybill code: (\d{6})", open(os.path.join(workdir, "a.log")).read())
        if found:
            code = found[-1]
            break
        time.sleep(0.1)
    status, _ = call(b, "POST", "/api/v1/auth/verify-email", {"email": "ada@live.example", "code": code or "000000"})
    check("a customer registers on A and verifies on B", status == 200)
    tokens = {}
    for who, email, password in (("customer", "ada@live.example", "correct-horse-battery"),
                                 ("manager", "manager@live.example", "a-very-good-password"),
                                 ("driver", "driver@live.example", "a-very-good-password")):
        status, body = call(a, "POST", "/api/v1/auth/login", {"email": email, "password": password})
        tokens[who] = body["accessToken"]
        tokens[who + "_id"] = body["user"]["id"]
    status, body = call(b, "POST", "/api/v1/orders", {
        "pickup": {"street": "Bahnhofplatz 1", "postalCode": "8001", "city": "Zürich", "latitude": 47.3779, "longitude": 8.5403},
        "dropoff": {"street": "Bundesplatz 3", "postalCode": "3005", "city": "Bern", "latitude": 46.9466, "longitude": 7.4441},
        "weightClass": "small", "service": "standard", "paymentMethod": "cash", "recipient": {"name": "Bea"}}, token=tokens["customer"])
    check("the customer orders through B", status == 201, str(body)[:300])
    # Each process keeps a session's check for at most a second; one ended elsewhere is refused
    # as soon as the live channel says so (well under the second).
    status, other = call(a, "POST", "/api/v1/auth/login", {"email": "ada@live.example", "password": "correct-horse-battery"})
    first, _ = call(b, "GET", "/api/v1/me", token=other["accessToken"])
    call(a, "POST", "/api/v1/auth/logout", {"refreshToken": other["refreshToken"]})
    ended_at, refused_after = time.monotonic(), None
    while time.monotonic() - ended_at < 3:
        answer, _ = call(b, "GET", "/api/v1/me", token=other["accessToken"])
        if answer == 401:
            refused_after = time.monotonic() - ended_at
            break
        time.sleep(0.01)
    check("a session signed out on A is refused on B within a second, though B had just checked it",
          first == 200 and refused_after is not None and refused_after < 1.0, f"{first}, refused after {refused_after}")
    order = body["order"]
    tokens["price"] = order["price"]
    tracking = order.get("tracking", {}).get("trackingUrl", "").rsplit("/", 1)[-1]
    if not tracking:
        status, detail = call(a, "GET", f"/api/v1/orders/{order['id']}", token=tokens["customer"])
        tracking = detail["tracking"]["trackingUrl"].rsplit("/", 1)[-1]
    # Each process keeps an order's detail and a page of orders for at most a second; a status
    # written by another process forgets them as soon as its live event arrives.
    seen, _ = call(b, "GET", f"/api/v1/orders/{order['id']}", token=tokens["customer"])
    listed, _ = call(b, "GET", "/api/v1/orders?limit=50", token=tokens["manager"])
    call(a, "POST", f"/api/v1/orders/{order['id']}/assign", {"driverId": tokens["driver_id"]}, token=tokens["manager"])
    assigned_at, detail_after, page_after = time.monotonic(), None, None
    while time.monotonic() - assigned_at < 3 and (detail_after is None or page_after is None):
        if detail_after is None:
            _, detail = call(b, "GET", f"/api/v1/orders/{order['id']}", token=tokens["customer"])
            if detail.get("status") == "assigned":
                detail_after = time.monotonic() - assigned_at
        if page_after is None:
            _, page = call(b, "GET", "/api/v1/orders?limit=50", token=tokens["manager"])
            if any(item["id"] == order["id"] and item["status"] == "assigned" for item in page.get("items", [])):
                page_after = time.monotonic() - assigned_at
        time.sleep(0.01)
    check("an order assigned on A shows as assigned on B, in its detail and in the manager's list, within a second",
          seen == 200 and listed == 200 and detail_after is not None and detail_after < 1.0 and page_after is not None and page_after < 1.0,
          f"{seen}, {listed}, detail after {detail_after}, page after {page_after}")
    call(b, "PUT", "/api/v1/drivers/me/duty", {"onDuty": True}, token=tokens["driver"])
    status, body = call(a, "POST", f"/api/v1/orders/{order['id']}/accept", token=tokens["driver"])
    check("assigned on A, accepted on A, driver on duty through B", status == 200 and body["status"] == "accepted", str(body)[:200])
    asyncio.run(scenario(a, b, tokens, order["id"], tracking))
    asyncio.run(rolling_restart([int(a.rsplit(":", 1)[1]), int(b.rsplit(":", 1)[1])], tokens, order["id"]))
finally:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()

print(f"live: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
