#!/usr/bin/env python3
"""A real SMTP server for Waybill's tests, built on aiosmtpd.

Listens on three loopback ports: plain SMTP, SMTP with STARTTLS (AUTH required after it), and
SMTP over implicit TLS (AUTH required). Every accepted message is written to OUT_DIR as a file,
with two headers added: X-Waybill-Sink-Security (none|startTLS|implicitTLS) and, when the body
carries a 'marker-…' word, X-Waybill-Sink-Marker. The body is decoded to text, so tests can read
codes and check that dot-stuffing and UTF-8 survived.

usage: smtp-sink.py OUT_DIR CERT KEY PLAIN_PORT STARTTLS_PORT TLS_PORT
"""
import asyncio
import email
import email.policy
import os
import re
import ssl
import sys
import uuid

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

USER, PASSWORD = b"waybill", b"sink-password"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.login == USER and auth_data.password == PASSWORD
    return AuthResult(success=ok, handled=False)


class Saver:
    def __init__(self, out_dir, security):
        self.out_dir = out_dir
        self.security = security

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        body = message.get_body(preferencelist=("plain",))
        text = body.get_content() if body is not None else ""
        marker = re.search(r"marker-[0-9A-Fa-f-]+", text + str(message["Subject"]))
        lines = [
            f"X-Waybill-Sink-Security: {self.security}",
            f"X-Waybill-Sink-Marker: {marker.group(0) if marker else ''}",
            f"X-Waybill-Sink-Rcpt: {','.join(envelope.rcpt_tos)}",
            f"From: {message['From']}",
            f"To: {message['To']}",
            f"Subject: {message['Subject']}",
            "",
            text.replace("\r\n", "\n"),
        ]
        path = os.path.join(self.out_dir, f"{uuid.uuid4()}.txt")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        os.rename(path + ".tmp", path)
        return "250 Message accepted for delivery"


def main():
    out_dir, cert, key, plain_port, starttls_port, tls_port = sys.argv[1:7]
    os.makedirs(out_dir, exist_ok=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    controllers = [
        Controller(Saver(out_dir, "none"), hostname="127.0.0.1", port=int(plain_port)),
        Controller(Saver(out_dir, "startTLS"), hostname="127.0.0.1", port=int(starttls_port),
                   tls_context=context, require_starttls=True, authenticator=authenticator, auth_required=True),
        Controller(Saver(out_dir, "implicitTLS"), hostname="127.0.0.1", port=int(tls_port),
                   ssl_context=context, authenticator=authenticator, auth_required=True,
                   auth_require_tls=False, server_hostname="localhost"),
    ]
    for c in controllers:
        c.start()
    print("smtp-sink ready", flush=True)
    try:
        asyncio.new_event_loop().run_forever()
    finally:
        for c in controllers:
            c.stop()


if __name__ == "__main__":
    main()
