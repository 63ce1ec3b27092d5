"""Streamed completions against the live server (run by test/clients/python.test.ts, which streams upstream)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import httpx
import pytest

from studio_api import AsyncStudio, DeltaEvent, DoneEvent, InvalidRequestError, ServerError, Studio, StudioError

env = os.environ.get
pytestmark = pytest.mark.skipif(not env("STUDIO_TEST_CLOSED_URL"), reason="run by test/clients/python.test.ts")
runs = iter(range(1_000_000))


def client(n: int, http: httpx.Client | None = None) -> Studio:
    """A client of its own account (the quota is a few completions a month)."""
    return Studio(api_key=env("STUDIO_TEST_STREAM_KEYS", "").split(",")[n], http_client=http)


def say(prefix: str) -> Any:
    return [{"role": "user", "content": f"{prefix} python stream {next(runs)} {os.getpid()}"}]


def closed(text: str) -> None:
    """Waits until the upstream call of ``text`` saw its socket close before its end."""
    deadline = time.monotonic() + 10
    while text not in httpx.get(env("STUDIO_TEST_CLOSED_URL", "")).json():
        assert time.monotonic() < deadline, f"the upstream call of {text!r} was not closed"
        time.sleep(0.05)


def test_deltas_then_done_and_the_final_completion() -> None:
    with client(0).completions.stream(messages=say("ok:")) as stream:
        events = list(stream)
        assert stream.response.headers["content-type"] == "text/event-stream"
    assert [e.text for e in events if isinstance(e, DeltaEvent)] == ["Hel", "lo", ", wo", "rld"]
    done = events[-1]
    assert isinstance(done, DoneEvent) and [e.type for e in events].count("done") == 1
    assert done.completion.content == "Hello, world" and done.completion.usage.input_tokens == 12
    assert stream.final_completion() == done.completion
    final = client(0).completions.stream(messages=say("ok:")).final_completion()
    assert final == done.completion and final._request_id


def test_leaving_the_block_early_closes_the_connection() -> None:
    messages = say("hold:")
    with client(1).completions.stream(messages=messages) as stream:
        for event in stream:
            assert isinstance(event, DeltaEvent)
            break
    closed(messages[0]["content"])
    with pytest.raises(StudioError, match="closed before its last event"):
        stream.final_completion()


def test_an_error_event_raises_a_server_error() -> None:
    with client(2).completions.stream(messages=say("die:")) as stream:
        texts = []
        with pytest.raises(ServerError) as failed:
            for event in stream:
                texts.append(event)
    assert failed.value.code == "upstream_error" and failed.value.request_id
    assert [e.text for e in texts if isinstance(e, DeltaEvent)] == ["Hel", "lo"]
    with pytest.raises(ServerError):
        stream.final_completion()


def test_before_the_first_event_typed_errors_and_retries() -> None:
    with pytest.raises(InvalidRequestError), client(3).completions.stream(messages=say("ok:"), max_tokens=0):
        pass
    calls: list[httpx.Request] = []
    counted = client(3, httpx.Client(event_hooks={"request": [calls.append]}))
    assert counted.completions.stream(messages=say("flaky:")).final_completion().content == "Hello, world"
    assert len(calls) == 2, "one retry after the 503"
    calls.clear()
    with pytest.raises(ServerError):
        counted.completions.stream(messages=say("die:")).final_completion()
    assert len(calls) == 1, "never retried after the first event"


def test_async_streams() -> None:
    async def run() -> None:
        async with AsyncStudio(api_key=env("STUDIO_TEST_STREAM_KEYS", "").split(",")[4]) as client:
            async with client.completions.stream(messages=say("ok:")) as stream:
                texts = [e.text async for e in stream if isinstance(e, DeltaEvent)]
                assert "".join(texts) == "Hello, world"
                assert (await stream.final_completion()).content == "Hello, world"
            assert (await client.completions.stream(messages=say("ok:")).final_completion()).stop_reason
            messages = say("hold:")
            async with client.completions.stream(messages=messages) as held:
                async for _ in held:
                    break
            await asyncio.to_thread(closed, messages[0]["content"])
            with pytest.raises(ServerError) as failed:
                await client.completions.stream(messages=say("die:")).final_completion()
            assert failed.value.code == "upstream_error"
            with pytest.raises(InvalidRequestError):
                async for _ in client.completions.stream(messages=say("ok:"), max_tokens=0):
                    pass

    asyncio.run(run())
