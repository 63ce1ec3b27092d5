"""The Python client against a live server: run by test/client-python.test.ts (``npm test``), which starts the
servers and passes their addresses in STUDIO_TEST_* variables; skipped without them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from typing import Any

import httpx
import pytest

from studio_api import (
    APIConnectionError,
    APITimeoutError,
    AsyncStudio,
    AuthenticationError,
    InvalidRequestError,
    PermissionDeniedError,
    QuotaExceededError,
    RateLimitError,
    ServerError,
    Studio,
)

env = os.environ.get
pytestmark = pytest.mark.skipif(not env("STUDIO_TEST_PROXY_URL"), reason="run by npm test (test/client-python.test.ts)")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
HELLO: Any = [{"role": "user", "content": "Hi"}]
LEAD: dict[str, Any] = {"name": "Ada", "email": "ada@example.com", "service": "web", "message": "Hello"}
flakes = iter(range(1_000_000))


def flaky() -> Any:
    return [{"role": "user", "content": f"flaky: python {next(flakes)} {os.getpid()} {threading.get_ident()}"}]


def counting() -> tuple[list[httpx.Request], httpx.Client]:
    calls: list[httpx.Request] = []
    return calls, httpx.Client(event_hooks={"request": [calls.append]})


def test_every_method_with_request_ids() -> None:
    client = Studio()
    me = client.me()
    assert me.plan == "FREE" and me.user is not None and me.user.email == "py-client@example.com"
    assert me.quota.limit == int(env("STUDIO_TEST_QUOTA", "0"))
    assert me._request_id
    completion = client.completions.create(messages=HELLO, model="fast", max_tokens=50, temperature=0.5, system="s")
    assert completion.content == "Hello, world" and completion.usage.input_tokens == 12 and completion._request_id
    lead = client.leads.create(**LEAD, utm={"source": "py"})
    assert UUID.match(lead.id) and lead.created_at[:2] == "20" and lead._request_id
    doc = client.openapi()
    assert doc["openapi"] == "3.1.0" and doc._request_id
    raw = client.with_raw_response.completions.create(messages=HELLO)
    assert raw.status_code == 200 and raw.request_id == raw.parse()._request_id
    assert "r=" in raw.headers["ratelimit"] and "total;dur=" in raw.headers["server-timing"]


def test_each_error_class_from_a_real_response() -> None:
    with pytest.raises(AuthenticationError) as auth:
        Studio(api_key="studio_nope").me()
    assert auth.value.status == 401 and auth.value.code == "unauthorized" and auth.value.request_id
    assert "invalid_token" in auth.value.headers["www-authenticate"]
    with pytest.raises(InvalidRequestError) as invalid:
        Studio().completions.create(messages=HELLO, max_tokens=0)
    assert invalid.value.status == 422 and invalid.value.issues[0]["path"] == "max_tokens"
    calls, http = counting()
    leads_only = Studio(api_key=env("STUDIO_TEST_LEADS_KEY"), http_client=http)
    with pytest.raises(PermissionDeniedError) as denied:
        leads_only.me()
    assert denied.value.status == 403 and denied.value.code == "forbidden" and denied.value.request_id
    assert denied.value.required_scope == "me:read" and len(calls) == 1, "forbidden is never retried"
    assert UUID.match(leads_only.leads.create(**LEAD).id), "the key still does what its scope allows"
    calls, http = counting()
    quota = int(env("STUDIO_TEST_QUOTA", "0"))
    spent = Studio(api_key=env("STUDIO_TEST_QUOTA_KEY"), http_client=http)
    for _ in range(quota):
        spent.completions.create(messages=HELLO)
    with pytest.raises(QuotaExceededError) as over:
        spent.completions.create(messages=HELLO)
    assert over.value.code == "quota_exceeded" and over.value.limit == quota and over.value.used == quota
    assert over.value.resets_at and len(calls) == quota + 1, "quota_exceeded is never retried"
    calls, http = counting()
    capped = Studio(api_key=env("STUDIO_TEST_KEY_CAP_KEY"), http_client=http)
    capped.completions.create(messages=HELLO)
    with pytest.raises(QuotaExceededError) as cap:
        capped.completions.create(messages=HELLO)
    assert cap.value.code == "key_quota_exceeded" and cap.value.limit == 1 and cap.value.used == 1
    assert cap.value.resets_at and len(calls) == 2, "key_quota_exceeded is never retried"
    with pytest.raises(ServerError) as server:
        Studio(max_retries=0).completions.create(messages=flaky())
    assert server.value.status == 503 and server.value.code == "upstream_unavailable" and server.value.request_id
    limited = Studio(base_url=env("STUDIO_TEST_WARP_URL"), api_key=env("STUDIO_TEST_WARP_KEY_1"), max_retries=0)
    limited.me()
    limited.me()
    with pytest.raises(RateLimitError) as rate:
        limited.me()
    assert rate.value.code == "rate_limited" and (rate.value.retry_after or 0) > 0


def test_retries_after_an_upstream_503_and_after_a_429_honouring_retry_after() -> None:
    calls, http = counting()
    assert Studio(http_client=http).completions.create(messages=flaky()).content == "Hello, world"
    assert len(calls) == 2, "one retry after the 503"
    calls, http = counting()
    limited = Studio(base_url=env("STUDIO_TEST_WARP_URL"), api_key=env("STUDIO_TEST_WARP_KEY_2"), http_client=http)
    limited.me()
    httpx.post(env("STUDIO_TEST_CONTROL_URL", ""))
    limited.me()
    assert limited.with_raw_response.me().status_code == 200
    assert len(calls) == 4, "the third call was refused once, then answered after Retry-After"


def test_connection_refused_and_a_timeout() -> None:
    calls, http = counting()
    with pytest.raises(APIConnectionError) as down:
        Studio(base_url=env("STUDIO_TEST_REFUSED_URL"), http_client=http).me()
    assert down.value.status is None and len(calls) == 3, "the first attempt and two retries"
    with pytest.raises(APITimeoutError):
        Studio(base_url=env("STUDIO_TEST_SILENT_URL"), timeout=0.2, max_retries=0).me()


def test_per_call_options_go_with_the_request_and_not_in_its_body() -> None:
    calls, http = counting()
    client = Studio(http_client=http)
    client.leads.create(**LEAD, extra_headers={"x-py-trace": "t1"}, timeout=5, max_retries=1, idempotency_key="py-o1")
    sent = calls[-1]
    assert sent.headers["x-py-trace"] == "t1" and sent.headers["idempotency-key"] == "py-o1"
    assert json.loads(sent.content) == LEAD and sent.extensions["timeout"]["read"] == 5
    completion = client.completions.create(messages=HELLO, stream=True)
    assert completion.content == "Hello, world" and json.loads(calls[-1].content) == {"messages": HELLO}
    calls, http = counting()
    silent = Studio(base_url=env("STUDIO_TEST_SILENT_URL"), timeout=30, http_client=http)
    with pytest.raises(APITimeoutError):
        silent.me(timeout=0.2, max_retries=0)
    assert len(calls) == 1, "the call's own max_retries"


def test_a_lead_is_created_once_when_the_first_response_is_lost() -> None:
    calls, http = counting()
    client = Studio(base_url=env("STUDIO_TEST_PROXY_URL"), http_client=http)
    raw = client.with_raw_response.leads.create(**LEAD)
    assert raw.status_code == 201 and raw.headers["idempotent-replayed"] == "true"
    keys = [c.headers["idempotency-key"] for c in calls]
    assert len(keys) == 2 and keys[0] == keys[1] and UUID.match(keys[0]), "one key for every attempt"
    mine = client.leads.create(**LEAD, idempotency_key="py-mine-1")
    assert Studio().leads.create(**LEAD, idempotency_key="py-mine-1").id == mine.id


def test_leads_list_iterates_over_pages_and_get_reads_one() -> None:
    client = Studio()
    ids = [client.leads.create(**{**LEAD, "name": f"Page {i}"}).id for i in range(3)][::-1]
    pages = list(client.leads.list(limit=2))
    seen = [lead.id for page in pages for lead in page.leads]
    assert seen[:3] == ids and len(seen) == len(set(seen)), "newest first, each once"
    assert all(len(page.leads) == 2 for page in pages[:-1]) and pages[-1].next_cursor is None
    assert pages[0]._request_id
    one = client.leads.get(ids[0])
    assert one.name == "Page 2" and one.status == "new" and one.assignee is None and one._request_id
    won = client.leads.update(ids[1], status="won")
    assert won.status == "won" and won.assignee is None and won._request_id
    assert client.leads.update(ids[1], assignee=None).assignee is None
    note = client.leads.add_note(ids[1], text="Called")
    assert note.text == "Called" and note.author_kind == "key" and note._request_id
    assert [n.text for n in client.leads.get(ids[1]).notes] == ["Called"]
    assert [p.leads for p in client.leads.list(status="lost", spam=False)] == [[]]
    raw = next(iter(client.with_raw_response.leads.list(limit=1)))
    assert raw.status_code == 200 and len(raw.parse().leads) == 1

    async def run() -> None:
        async with AsyncStudio() as client:
            pages = [page async for page in client.leads.list(limit=2)]
            assert [lead.id for page in pages for lead in page.leads][:3] == ids
            assert (await client.leads.get(ids[1])).name == "Page 1"
            raw = [page async for page in client.with_raw_response.leads.list(limit=100)]
            assert raw[0].status_code == 200 and raw[-1].parse().next_cursor is None

    asyncio.run(run())


def test_async_client_same_shape() -> None:
    async def run() -> None:
        async with AsyncStudio() as client:
            me = await client.me()
            assert me.plan == "FREE" and me._request_id
            completion = await client.completions.create(messages=HELLO)
            assert completion.content == "Hello, world"
            assert (await client.openapi())["openapi"] == "3.1.0"
            with pytest.raises(InvalidRequestError):
                await client.leads.create(name="A", email="not an email", service="s", message="m")
        async with AsyncStudio(base_url=env("STUDIO_TEST_PROXY_URL")) as proxied:
            raw = await proxied.with_raw_response.leads.create(**LEAD)
            assert raw.headers["idempotent-replayed"] == "true" and UUID.match(raw.parse().id)
        async with AsyncStudio(base_url=env("STUDIO_TEST_SILENT_URL"), timeout=0.2, max_retries=0) as silent:
            with pytest.raises(APITimeoutError):
                await silent.me()

    asyncio.run(run())
