#!/usr/bin/env python3
"""End-to-end smoke test of the `waybill` executable as an operator and a user meet it.

usage: smoke-test.py PATH/TO/waybill (sqlite | postgres://…)

In a fresh working directory: `waybill migrate`, `waybill user create` (the first manager),
`waybill serve --demo` on a free port, then over HTTP: health, the spec, demo sign-ins for all
three roles, a customer's registration with the code read from the server's log (the development
mailer), a manager inviting a driver. Uses only the standard library.
"""
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
import uuid
import base64

# A 40 x 20 signature, as a phone's signature pad would produce.
SIGNATURE_PNG = "iVBORw0KGgoAAAANSUhEUgAAACgAAAAUCAAAAADaLSBnAAAAfUlEQVR42rWSOQ7AIAwEd6L8/8ubgiNgTEQTJKiGHWODdbYu/QcijkC+SCb1/lmIDjKcEUNyA5EspySSPahdNmlcfwy7MmtcAxkQIje3x28kq7aBY4gzbQUJtbFou9pzJFFbwNgQ17HbYdaOTfFajaQ7n7GP/qOzu+nHzRwP1W0mKkUvVgwAAAAASUVORK5CYII="

binary, database = sys.argv[1], sys.argv[2]
workdir = tempfile.mkdtemp(prefix="waybill-smoke-")
env = dict(os.environ, LOG_LEVEL="info", BCRYPT_COST="10")
if database != "sqlite":
    env["DATABASE_URL"] = database
passed = failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"  ok   {name}")
    else:
        failed += 1
        print(f"  FAIL {name} {detail}")


def run(*args):
    return subprocess.run([binary, *args], cwd=workdir, env=env, capture_output=True, text=True, timeout=300)


def call(method, path, body=None, token=None):
    raw_body = isinstance(body, bytes)
    data = body if raw_body else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(base + path, data=data, method=method)
    if data is not None and not raw_body:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, (json.loads(raw) if raw and raw[:1] in b"{[" else raw.decode())
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, (json.loads(raw) if raw[:1] in b"{[" else raw.decode())


print(f"smoke test on {database.split('@')[-1]} in {workdir}")

migrated = run("migrate", "--yes")
check("waybill migrate", migrated.returncode == 0, migrated.stderr[-500:] + migrated.stdout[-500:])
created = run("user", "create", "--role", "manager", "--email", "first@ops.example", "--first-name", "Fiona",
              "--last-name", "First", "--password", "a-very-good-password")
check("waybill user create makes the first manager", created.returncode == 0, created.stderr[-500:] + created.stdout[-500:])
again = run("user", "create", "--role", "manager", "--email", "first@ops.example", "--first-name", "F",
            "--last-name", "F", "--password", "a-very-good-password")
check("waybill user create refuses a duplicate", again.returncode != 0)

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
base = f"http://127.0.0.1:{port}"
env["PUBLIC_URL"] = base
log_path = os.path.join(workdir, "server.log")
server = subprocess.Popen([binary, "serve", "--demo", "--port", str(port)], cwd=workdir, env=env,
                          stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
try:
    for _ in range(300):
        try:
            if call("GET", "/health")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    status, health = call("GET", "/health")
    check("GET /health", status == 200 and health.get("status") == "ok", str(health))
    status, spec = call("GET", "/api/v1/openapi.yaml")
    check("GET /api/v1/openapi.yaml", status == 200 and "openapi: 3.1.0" in spec)

    logged = open(log_path).read()
    demo = dict(re.findall(r"^\s+(manager|driver|customer) \S+ (\S+)$", logged, re.M))
    check("serve --demo prints three demo accounts", len(demo) == 3, logged[-800:])
    for role, password in demo.items():
        status, body = call("POST", "/api/v1/auth/login", {"email": f"{role}@demo.waybill.example", "password": password})
        check(f"demo {role} signs in", status == 200 and body.get("role") == role, str(body)[:200])

    status, body = call("POST", "/api/v1/auth/login", {"email": "first@ops.example", "password": "a-very-good-password"})
    check("the first manager signs in", status == 200 and body.get("role") == "manager", str(body)[:200])
    manager = body.get("accessToken")

    form = {"firstName": "Ada", "lastName": "Muster", "address": "Bahnhofstrasse 1", "postalCode": "8001",
            "city": "Zürich", "email": "ada@smoke.example", "password": "correct-horse-battery", "isCompany": False}
    status, body = call("POST", "/api/v1/auth/register", form)
    check("a customer registers", status == 201 and body == {"status": "SUCCESS"}, str(body))
    code = None
    for _ in range(100):
        found = re.findall(r"To: ada@smoke\.example\nSubject: Your Waybill code: (\d{6})", open(log_path).read())
        if found:
            code = found[-1]
            break
        time.sleep(0.1)
    check("the development mailer logs the code", code is not None)
    status, body = call("POST", "/api/v1/auth/verify-email", {"email": "ada@smoke.example", "code": code or "000000"})
    check("the code verifies the email", status == 200, str(body))
    status, body = call("POST", "/api/v1/auth/login", {"email": "ada@smoke.example", "password": "correct-horse-battery"})
    check("the customer signs in", status == 200, str(body)[:200])
    customer = body.get("accessToken")
    status, body = call("GET", "/api/v1/users", token=customer)
    check("a customer cannot list users", status == 403 and body["error"]["code"] == "forbidden", str(body))
    status, body = call("POST", "/api/v1/users", {"role": "driver", "firstName": "Luca", "lastName": "B",
                                                  "email": "luca@smoke.example"}, token=manager)
    check("a manager invites a driver", status == 201 and body.get("role") == "driver", str(body))
    status, body = call("GET", "/api/v1/users?q=smoke", token=manager)
    check("the manager finds both new accounts", status == 200 and len(body["items"]) == 2, str(body)[:300])

    # A delivery end to end: card payment on the sandbox page, dispatch, proof of delivery.
    order_body = {"pickup": {"useAccountAddress": True}, "dropoff": {"street": "Bundesplatz 3", "postalCode": "3005",
                  "city": "Bern"}, "weightClass": "small", "service": "express", "paymentMethod": "card",
                  "recipient": {"name": "Bea Beispiel"}}
    status, body = call("POST", "/api/v1/orders", order_body, token=customer)
    check("the customer orders a delivery paid by card", status == 201 and body["next"]["action"] == "pay", str(body)[:300])
    order_id, pay_url = body.get("order", {}).get("id"), body.get("next", {}).get("paymentUrl", "")
    status, page = call("GET", pay_url[len(base):])
    check("the sandbox payment page says it is a test", status == 200 and "TEST MODE" in page, str(page)[:200])
    status, page = call("POST", pay_url[len(base):] + "/pay", b"")
    check("paying on the sandbox page confirms the order", status == 200 and "Payment received" in page, str(page)[:300])
    status, body = call("GET", f"/api/v1/orders/{order_id}", token=customer)
    check("the order is pending and paid", status == 200 and body["status"] == "pending" and body["payment"]["status"] == "paid", str(body)[:300])
    status, body = call("POST", "/api/v1/auth/login", {"email": "driver@demo.waybill.example", "password": demo.get("driver", "")})
    driver, driver_id = body.get("accessToken"), body.get("user", {}).get("id")
    status, body = call("POST", f"/api/v1/orders/{order_id}/assign", {"driverId": driver_id}, token=manager)
    check("the manager assigns it to the demo driver", status == 200 and body["status"] == "assigned", str(body)[:300])
    status, body = call("POST", f"/api/v1/orders/{order_id}/accept", token=driver)
    check("the driver accepts", status == 200 and body["status"] == "accepted", str(body)[:300])
    status, body = call("POST", f"/api/v1/orders/{order_id}/pickup", {}, token=driver)
    check("the driver picks it up", status == 200 and body["status"] == "in_transit", str(body)[:300])
    boundary = uuid.uuid4().hex
    png = base64.b64decode(SIGNATURE_PNG)
    multipart = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"signature\"; filename=\"s.png\"\r\n"
                 f"Content-Type: image/png\r\n\r\n").encode() + png + (
                 f"\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"recipientName\"\r\n\r\nBea Beispiel"
                 f"\r\n--{boundary}--\r\n").encode()
    request = urllib.request.Request(base + f"/api/v1/orders/{order_id}/deliver", data=multipart, method="POST")
    request.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    request.add_header("Authorization", f"Bearer {driver}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, body = response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read().decode()
    check("the driver delivers with the recipient's signature", status == 200 and body["status"] == "delivered", str(body)[:300])
    signature_url = body.get("proof", {}).get("signature", {}).get("url", "") if isinstance(body, dict) else ""
    request = urllib.request.Request(base + signature_url, headers={"Authorization": f"Bearer {customer}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        check("the customer sees the signature", response.status == 200 and response.read()[:4] == b"\x89PNG")
    status, body = call("GET", "/api/v1/notifications", token=customer)
    check("the customer was told of each stage", status == 200 and [n["kind"] for n in body["items"]][:3]
          == ["order_delivered", "order_picked_up", "order_accepted"], str(body)[:300])
    check("no password or hash in the log", "correct-horse-battery" not in open(log_path).read()
          and "$2b$" not in open(log_path).read())
finally:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    check("the server stops cleanly on SIGTERM", server.returncode is not None)

print(f"smoke: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
