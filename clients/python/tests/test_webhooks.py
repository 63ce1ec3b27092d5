"""``studio_api.webhooks.verify`` against deliveries signed by the service's signer and by ``standardwebhooks`` (the
Standard Webhooks reference): test/clients/python.test.ts writes them to the JSON file named by
STUDIO_TEST_WEBHOOK_VECTORS (test/support/webhook-vectors.ts) just before it runs pytest; skipped without it."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from typing import Any

import httpx
import pytest

import studio_api
from studio_api import StudioError
from studio_api.webhooks import WebhookVerificationError, verify

VECTORS = os.environ.get("STUDIO_TEST_WEBHOOK_VECTORS")
pytestmark = pytest.mark.skipif(not VECTORS, reason="run by npm test (test/clients/python.test.ts)")


def vectors() -> list[dict[str, Any]]:
    with open(VECTORS or "", encoding="utf-8") as f:
        cases: list[dict[str, Any]] = json.load(f)
    return cases


def at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def test_what_the_service_and_standardwebhooks_sign_verifies_and_what_they_refuse_is_refused() -> None:
    cases = vectors()
    assert len(cases) >= 20
    for v in cases:
        for body in (v["body"], v["body"].encode()):
            if "error" in v:
                with pytest.raises(WebhookVerificationError) as refused:
                    verify(body, v["headers"], v["secret"], now=at(v["now"]))
                assert refused.value.reason == v["error"] == refused.value.code, v["name"]
                assert isinstance(refused.value, StudioError)
            else:
                assert verify(body, v["headers"], v["secret"], now=at(v["now"])) == json.loads(v["body"]), v["name"]


def test_headers_in_any_case_and_as_httpx_headers_and_the_clock_by_default() -> None:
    signed = next(v for v in vectors() if v["name"] == "service: signed")
    upper = {k.upper(): h for k, h in signed["headers"].items()}
    for headers in (signed["headers"], upper, httpx.Headers(signed["headers"])):
        event = verify(signed["body"], headers, signed["secret"])
        assert event["type"] == "lead.created" and event["data"]["keyPrefix"] == "sk_live_ab12"
        assert event["data"]["name"] == "Zoë Ng 🚀" and event["data"].get("utm") == {"source": "ads"}
    bare = signed["secret"].removeprefix("whsec_")
    assert verify(signed["body"], signed["headers"], bare)["type"] == "lead.created", "the bare base64 too"
    ahead = next(v for v in vectors() if v["name"] == "service: signed 1 h ahead")
    with pytest.raises(WebhookVerificationError) as late:
        verify(ahead["body"], ahead["headers"], ahead["secret"])
    assert late.value.reason == "invalid_timestamp"


def test_malformed_headers_and_secrets() -> None:
    signed = next(v for v in vectors() if v["name"] == "standardwebhooks: signed")
    body, headers, secret, now = signed["body"], signed["headers"], signed["secret"], at(signed["now"])
    for name, value, reason in [
        ("webhook-timestamp", "1e9", "invalid_timestamp"),
        ("webhook-timestamp", "", "missing_header"),
        ("webhook-signature", "v1,!!", "bad_signature"),
        ("webhook-signature", headers["webhook-signature"].replace("v1,", "v1,A"), "bad_signature"),
    ]:
        with pytest.raises(WebhookVerificationError) as refused:
            verify(body, {**headers, name: value}, secret, now=now)
        assert refused.value.reason == reason, (name, value)
    for bad in ("whsec_", "whsec_not base64!", ""):
        with pytest.raises(ValueError, match="secret"):
            verify(body, headers, bad, now=now)


def test_reachable_as_studio_api_webhooks_verify() -> None:
    assert studio_api.webhooks.verify is verify
    assert studio_api.WebhookVerificationError is WebhookVerificationError
