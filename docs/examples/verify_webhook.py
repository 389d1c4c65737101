"""Checks a Waybill webhook delivery (docs/integrations.md). Python 3.8+, standard library only.

    python3 verify_webhook.py SECRET SIGNATURE_HEADER < body.json   # prints "valid" or "invalid: why"
"""
import hashlib
import hmac
import sys
import time


def verify_waybill_signature(body: bytes, header: str, secret: str, tolerance: int = 300) -> None:
    """Raises ValueError unless `header` (Waybill-Signature) signs `body` (the exact bytes received)."""
    timestamp, signatures = None, []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            timestamp = value
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not timestamp.isdigit() or not signatures:
        raise ValueError("malformed Waybill-Signature header")
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, s) for s in signatures):
        raise ValueError("no signature matches")
    if abs(time.time() - int(timestamp)) > tolerance:
        raise ValueError("timestamp outside the tolerance (a replay?)")


if __name__ == "__main__":
    try:
        verify_waybill_signature(sys.stdin.buffer.read(), sys.argv[2], sys.argv[1])
        print("valid")
    except ValueError as error:
        print(f"invalid: {error}")
        sys.exit(1)
