#!/usr/bin/env python3
"""Fills a database the way a real installation of the previous release would be filled, for the
migration test (`ShipmentMigrationTests`): orders in every status and payment state, with their
events, proofs, photos, notifications, tracking links, trails and ledger.

usage: make-migration-fixture.py PATH/TO/waybill OUT_DIR [postgres://…]

With SQLite it writes OUT_DIR/before-shipments.sqlite; with a PostgreSQL URL (an empty database)
OUT_DIR/before-shipments.pg.sql (pg_dump --inserts of the public schema, without owners, made to
load into any schema); and the ids of the orders it made in each state. Run it
with the binary of the release before the migration (see docs/architecture.md, "Migrations").
"""
import base64, json, os, re, shutil, signal, socket, subprocess, sys, tempfile, time, uuid
import urllib.error, urllib.request

SIGNATURE_PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAACgAAAAUCAAAAADaLSBnAAAAfUlEQVR42rWSOQ7AIAwEd6L8/8ubgiNgTEQTJKiGHWODdbYu/QcijkC+SCb1/lmIDjKcEUNyA5EspySSPahdNmlcfwy7MmtcAxkQIje3x28kq7aBY4gzbQUJtbFou9pzJFFbwNgQ17HbYdaOTfFajaQ7n7GP/qOzu+nHzRwP1W0mKkUvVgwAAAAASUVORK5CYII=")

binary, out_dir = sys.argv[1], os.path.abspath(sys.argv[2])
database = sys.argv[3] if len(sys.argv) > 3 else "sqlite"
workdir = tempfile.mkdtemp(prefix="waybill-fixture-")
env = dict(os.environ, LOG_LEVEL="info", BCRYPT_COST="10", ORDERS_PER_CUSTOMER_PER_HOUR="1000")
if database != "sqlite":
    env["DATABASE_URL"] = database
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
base = f"http://127.0.0.1:{port}"
env["PUBLIC_URL"] = base


def call(method, path, body=None, token=None, multipart=None):
    headers = {}
    data = None
    if multipart is not None:
        boundary = uuid.uuid4().hex
        parts = b""
        for name, value in multipart:
            if isinstance(value, bytes):
                parts += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}.png\"\r\n"
                          f"Content-Type: image/png\r\n\r\n").encode() + value + b"\r\n"
            else:
                parts += f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n".encode()
        data = parts + f"--{boundary}--\r\n".encode()
        headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
    elif body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, (json.loads(raw) if raw[:1] in b"{[" else raw.decode())
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, (json.loads(raw) if raw[:1] in b"{[" else raw.decode())


def ok(result, what):
    status, body = result
    if status >= 300:
        sys.exit(f"{what}: {status} {body}")
    return body


log_path = os.path.join(workdir, "server.log")
server = subprocess.Popen([binary, "serve", "--demo", "--port", str(port)], cwd=workdir, env=env,
                          stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
try:
    for _ in range(600):
        try:
            if call("GET", "/health")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    demo = {}
    for _ in range(100):
        demo = dict(re.findall(r"^\s+(manager|driver|customer) \S+ (\S+)$", open(log_path).read(), re.M))
        if len(demo) == 3:
            break
        time.sleep(0.1)
    login = lambda email, password: ok(call("POST", "/api/v1/auth/login", {"email": email, "password": password}), "login " + email)
    manager = login("manager@demo.waybill.example", demo["manager"])["accessToken"]
    driver_login = login("driver@demo.waybill.example", demo["driver"])
    driver, driver_id = driver_login["accessToken"], driver_login["user"]["id"]
    customer = login("customer@demo.waybill.example", demo["customer"])["accessToken"]

    # A driver who left: invited, then disabled (a ban once restrictions exist).
    gone = ok(call("POST", "/api/v1/users", {"role": "driver", "firstName": "Gina", "lastName": "Gegangen",
        "email": "gone@fixture.example"}, token=manager), "invite driver")
    ok(call("PATCH", f"/api/v1/users/{gone['id']}", {"disabled": True}, token=manager), "disable driver")

    # A company, for invoices.
    ok(call("POST", "/api/v1/auth/register", {"firstName": "Fritz", "lastName": "Firma", "address": "Marktgasse 5",
        "postalCode": "3011", "city": "Bern", "email": "firm@fixture.example", "password": "correct-horse-battery",
        "isCompany": True, "companyName": "Firma AG"}), "register company")
    code = None
    for _ in range(100):
        found = re.findall(r"To: firm@fixture\.example\nSubject: Your Waybill code: (\d{6})", open(log_path).read())
        if found:
            code = found[-1]
            break
        time.sleep(0.1)
    ok(call("POST", "/api/v1/auth/verify-email", {"email": "firm@fixture.example", "code": code}), "verify company")
    firm = login("firm@fixture.example", "correct-horse-battery")["accessToken"]

    def order(token, payment="cash", recipient=None, code=False, dropoff=None, notes=None):
        body = {"pickup": {"useAccountAddress": True},
                "dropoff": dropoff or {"street": "Bundesplatz 3", "postalCode": "3005", "city": "Bern",
                                       "latitude": 46.9466, "longitude": 7.4441},
                "weightClass": "small", "service": "standard", "paymentMethod": payment,
                "recipient": recipient or {"name": "Bea Beispiel", "email": "bea@fixture.example", "phone": "+41 79 123 45 67"}}
        if code:
            body["requireRecipientCode"] = True
        if notes:
            body["notes"] = notes
        created = ok(call("POST", "/api/v1/orders", body, token=token), "order")
        return created["order"]["id"], created.get("next", {}).get("paymentUrl")

    def pay(url):
        ok(call("POST", url[len(base):] + "/pay"), "pay")

    def step(order_id, action, token, body=None):
        if action == "pickup":
            current = ok(call("GET", f"/api/v1/orders/{order_id}", token=token), "get")
            if current["payment"]["method"] == "cash":
                body = {"cashCollected": current["price"]}
        return ok(call("POST", f"/api/v1/orders/{order_id}/{action}", body if body is not None else {}, token=token), action)

    made = {}
    made["awaiting_card"], _ = order(customer, "card")
    made["pending_paid"], url = order(customer, "twint", dropoff={"street": "Rue du Rhône 1", "postalCode": "1204",
                                                                 "city": "Genève", "country": "CH"})
    pay(url)
    made["assigned"], _ = order(customer, notes="Ring twice")
    step(made["assigned"], "assign", manager, {"driverId": driver_id})
    made["accepted"], _ = order(customer, recipient={"name": "Carl Ohne"})
    step(made["accepted"], "assign", manager, {"driverId": driver_id})
    step(made["accepted"], "accept", driver)
    made["in_transit"], _ = order(customer, code=True)
    ok(call("POST", f"/api/v1/orders/{made['in_transit']}/photos", token=customer, multipart=[("photo", SIGNATURE_PNG)]), "photo")
    step(made["in_transit"], "assign", manager, {"driverId": driver_id})
    step(made["in_transit"], "accept", driver)
    step(made["in_transit"], "pickup", driver)
    ok(call("POST", f"/api/v1/orders/{made['in_transit']}/tracking-link", {}, token=customer), "tracking link")
    made["delivered_card"], url = order(customer, "card")
    pay(url)
    step(made["delivered_card"], "assign", manager, {"driverId": driver_id})
    step(made["delivered_card"], "accept", driver)
    step(made["delivered_card"], "pickup", driver)
    ok(call("POST", f"/api/v1/orders/{made['delivered_card']}/deliver", token=driver,
            multipart=[("signature", SIGNATURE_PNG), ("photo", SIGNATURE_PNG), ("recipientName", "Bea Beispiel")]), "deliver")
    made["failed"], _ = order(customer)
    step(made["failed"], "assign", manager, {"driverId": driver_id})
    step(made["failed"], "accept", driver)
    step(made["failed"], "pickup", driver)
    step(made["failed"], "fail", driver, {"reason": "recipient_absent", "note": "Nobody home"})
    made["cancelled_refunded"], url = order(customer, "card")
    pay(url)
    step(made["cancelled_refunded"], "cancel", manager, {"reason": "Wrong address"})
    made["cancelled_cash"], _ = order(customer)
    step(made["cancelled_cash"], "cancel", customer, {"reason": "Changed my mind"})
    made["invoiced_delivered"], _ = order(firm, "invoice")
    step(made["invoiced_delivered"], "assign", manager, {"driverId": driver_id})
    step(made["invoiced_delivered"], "accept", driver)
    step(made["invoiced_delivered"], "pickup", driver)
    ok(call("POST", f"/api/v1/orders/{made['invoiced_delivered']}/deliver", token=driver,
            multipart=[("signature", SIGNATURE_PNG), ("recipientName", "Bea B.")]), "deliver invoice")
    made["invoiced_cancelled"], _ = order(firm, "invoice")
    step(made["invoiced_cancelled"], "cancel", firm, {"reason": "Not needed"})
    # A driver's trail on the parcel being carried.
    ok(call("PUT", "/api/v1/drivers/me/duty", {"onDuty": True}, token=driver), "duty")
    now = time.time()
    points = [{"latitude": 47.37 + i * 0.001, "longitude": 8.54, "recordedAt":
               time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 60 + i * 10))} for i in range(5)]
    ok(call("POST", "/api/v1/drivers/me/locations", {"positions": points}, token=driver), "locations")
    time.sleep(1)
finally:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)

os.makedirs(out_dir, exist_ok=True)
kind = "sqlite" if database == "sqlite" else "pg"
with open(os.path.join(out_dir, f"before-shipments.{kind}.orders.json"), "w") as f:
    json.dump(made, f, indent=1, sort_keys=True)
if database == "sqlite":
    subprocess.run(["sqlite3", os.path.join(workdir, "waybill.sqlite"), "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;"], check=True)
    shutil.copy(os.path.join(workdir, "waybill.sqlite"), os.path.join(out_dir, "before-shipments.sqlite"))
else:
    dump = subprocess.run(["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--schema=public", database.replace("tlsmode=", "sslmode=")],
                          capture_output=True, text=True, check=True).stdout
    # Made to load into any schema (the tests' search path): no psql commands, settings, schema
    # creation or `public.` qualifiers. Loaded as one simple query.
    kept = [line.replace("public.", "") for line in dump.split("\n")
            if not (line.startswith("\\") or line.startswith("SET ") or line.startswith("SELECT pg_catalog.set_config")
                    or line.startswith("CREATE SCHEMA public") or line.startswith("COMMENT ON SCHEMA public"))]
    with open(os.path.join(out_dir, "before-shipments.pg.sql"), "w") as f:
        f.write("\n".join(kept))
print("fixture written to", out_dir, json.dumps(made))
