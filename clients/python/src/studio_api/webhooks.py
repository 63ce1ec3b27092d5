"""Verifying a webhook delivery (Standard Webhooks): ``verify(body, headers, secret)`` returns the event.

The headers must be present, the timestamp within 5 minutes of now, one of the ``v1,`` signatures the HMAC-SHA256 of
``"<webhook-id>.<webhook-timestamp>.<body>"`` under the secret (the base64 after ``whsec_``), and the body an event.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, cast

from . import _events
from ._errors import StudioError
from ._events import *  # noqa: F403 (the generated event classes, listed in its __all__)
from ._events import WebhookEvent

__all__ = [*_events.__all__, "Reason", "WebhookVerificationError", "verify"]

Reason = Literal["missing_header", "invalid_timestamp", "bad_signature", "invalid_payload"]
TOLERANCE = 5 * 60
_SECONDS = re.compile(r"[0-9]{1,12}")


class WebhookVerificationError(StudioError):
    """A delivery failed verification; ``reason`` says why (also in ``code``). Answer with a 4xx; do not act on it."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(message, code=reason)
        self.reason: Reason = reason


def _key(secret: str) -> bytes:
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise ValueError("The webhook secret is not base64 (after `whsec_`)")
    return key


def _header(headers: Mapping[str, str], name: str) -> str:
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    if not value:
        raise WebhookVerificationError("missing_header", f"The {name} header is missing")
    return value


def _check_timestamp(timestamp: str, now: datetime | None) -> None:
    if not _SECONDS.fullmatch(timestamp):
        raise WebhookVerificationError("invalid_timestamp", "The webhook-timestamp header is not a number of seconds")
    seconds = int(now.timestamp() if now is not None else time.time())
    if abs(seconds - int(timestamp)) > TOLERANCE:
        raise WebhookVerificationError("invalid_timestamp", "The webhook-timestamp is more than 5 minutes from now")


def _signed(signatures: str, expected: bytes) -> bool:
    for signature in signatures.split(" "):
        version, _, given = signature.partition(",")
        if version == "v1" and hmac.compare_digest(given.encode(), base64.b64encode(expected)):
            return True
    return False


def _event(body: bytes) -> WebhookEvent:
    try:
        event: Any = json.loads(body.decode("utf-8"))
    except ValueError:
        raise WebhookVerificationError("invalid_payload", "The body is not JSON") from None
    if not (
        isinstance(event, dict)
        and isinstance(event.get("type"), str)
        and isinstance(event.get("timestamp"), str)
        and isinstance(event.get("data"), dict)
    ):
        raise WebhookVerificationError("invalid_payload", 'The body is not an event ({"type", "timestamp", "data"})')
    return cast(WebhookEvent, event)


def verify(body: str | bytes, headers: Mapping[str, str], secret: str, *, now: datetime | None = None) -> WebhookEvent:
    """The event of a delivery the service signed with ``secret`` (``whsec_...``) in the last 5 minutes.

    ``body`` is the request body exactly as received (text or bytes, not parsed and serialized again); ``headers``
    any mapping of its headers (a dict in any case, Flask's, Django's, httpx's). Raises ``WebhookVerificationError``
    otherwise, and ``ValueError`` for a secret that is not one. Types added after this client arrive too; a delivery
    can come more than once: de-duplicate on the ``webhook-id`` header.
    """
    key = _key(secret)
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    _check_timestamp(timestamp, now)
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    expected = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + raw, hashlib.sha256).digest()
    if not _signed(signatures, expected):
        raise WebhookVerificationError("bad_signature", "No webhook-signature matches the body and the secret")
    return _event(raw)
