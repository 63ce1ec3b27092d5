"""The services test/completions/python-sdks.test.ts starts, and its control server over their two fake upstreams.

STUDIO_TEST_SERVICES maps each fallback list (``openai``, ``anthropic``, ``anthropic,openai``, ``openai,anthropic``)
to the base URL of a service with that STUDIO_UPSTREAM; all of them call the same two fakes. Through
STUDIO_TEST_CONTROL_URL a test queues the answers the fakes give (``answer``), reads what they were sent (``seen``),
makes keys (``new_key``) and moves the rate limiter's clock (``warp_clock``). An upstream with nothing queued answers
a short text. The answers are built here in each protocol's wire format from one description (``text`` and ``tool``
blocks), whole or streamed, so that a test can ask the same of either upstream.
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any, Literal, TypedDict

import pytest

Upstream = Literal["anthropic", "openai"]
UPSTREAMS: list[Upstream] = ["openai", "anthropic"]

SERVICES: dict[str, str] = json.loads(os.environ.get("STUDIO_TEST_SERVICES", "{}"))
CONTROL = os.environ.get("STUDIO_TEST_CONTROL_URL", "")
needs_services = pytest.mark.skipif(not CONTROL, reason="run by npm test (test/completions/python-sdks.test.ts)")

Json = dict[str, Any]


class Answer(TypedDict, total=False):
    status: int
    json: Any
    headers: dict[str, str]
    sse: str
    sizes: list[int]


def _post(path: str, body: Json | None = None) -> Any:
    request = urllib.request.Request(
        CONTROL + path,
        data=json.dumps(body or {}).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def reset() -> int:
    """Forgets what the fakes saw and were told; returns how many queued answers were never taken."""
    left: int = _post("/reset")["left"]
    return left


def answer(upstream: Upstream, *answers: Answer) -> None:
    _post("/answers", {"upstream": upstream, "answers": list(answers)})


def seen(upstream: Upstream) -> list[Json]:
    """The requests the upstream received since the test began: ``path``, ``headers`` and ``body`` each."""
    requests: list[Json] = _post("/seen")[upstream]
    return requests


def new_key(*, plan: str | None = None, rate_limit: int | None = None, models: list[str] | None = None) -> str:
    """A key of a new account (plan STARTER: one completion a month), with its own rate limit and models when given."""
    key: str = _post("/keys", {"plan": plan, "rate_limit": rate_limit, "models": models})["key"]
    return key


def warp_clock() -> None:
    """Every service's clock jumps 58 s: a key's requests of a minute ago leave its window at most 2 s later."""
    _post("/clock")


# What an answer says, in either protocol.


def text(*pieces: str) -> Json:
    """A text block, streamed in these pieces."""
    return {"type": "text", "pieces": list(pieces)}


def tool(call_id: str, name: str, *fragments: str) -> Json:
    """A tool call whose JSON arguments are streamed in these fragments (split anywhere, mid-token included)."""
    return {"type": "tool", "id": call_id, "name": name, "fragments": list(fragments)}


def _is_tool_call(blocks: tuple[Json, ...]) -> bool:
    return any(b["type"] == "tool" for b in blocks)


# Usage as each upstream reports it: Anthropic's input excludes the cache reads and writes, OpenAI's prompt includes
# its cached tokens.
ANTHROPIC_USAGE = {
    "input_tokens": 12,
    "cache_read_input_tokens": 3,
    "cache_creation_input_tokens": 4,
    "output_tokens": 5,
}
OPENAI_USAGE = {
    "prompt_tokens": 20,
    "completion_tokens": 7,
    "total_tokens": 27,
    "prompt_tokens_details": {"cached_tokens": 8},
}


def reply(status: int, body: Any, headers: dict[str, str] | None = None) -> Answer:
    return {"status": status, "json": body, "headers": headers or {}}


def overloaded(upstream: Upstream) -> Answer:
    """An overloaded upstream, as each kind says it: a fallback list moves on to the next upstream at once."""
    if upstream == "anthropic":
        return reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    return reply(503, {"error": {"message": "overloaded", "type": "server_error", "param": None, "code": None}})


def whole(upstream: Upstream, *blocks: Json) -> Answer:
    """A whole answer of these blocks, in the upstream's protocol."""
    if upstream == "anthropic":
        content: list[Json] = [
            {"type": "text", "text": "".join(b["pieces"])}
            if b["type"] == "text"
            else {"type": "tool_use", "id": b["id"], "name": b["name"], "input": json.loads("".join(b["fragments"]))}
            for b in blocks
        ]
        message = {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": content,
            "stop_reason": "tool_use" if _is_tool_call(blocks) else "end_turn",
            "stop_sequence": None,
            "usage": ANTHROPIC_USAGE,
        }
        return reply(200, message)
    texts = [b for b in blocks if b["type"] == "text"]
    calls = [
        {"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": "".join(b["fragments"])}}
        for b in blocks
        if b["type"] == "tool"
    ]
    assistant: Json = {"role": "assistant", "content": "".join("".join(b["pieces"]) for b in texts) if texts else None}
    if calls:
        assistant["tool_calls"] = calls
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-x",
        "choices": [{"index": 0, "message": assistant, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": OPENAI_USAGE,
    }
    return reply(200, completion)


def _event(kind: str, data: Json) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


def _anthropic_events(blocks: tuple[Json, ...]) -> str:
    start_usage = {**ANTHROPIC_USAGE, "output_tokens": 1}
    message = {"id": "msg_01", "type": "message", "role": "assistant", "content": [], "model": "claude-x"}
    events = _event("message_start", {"message": {**message, "stop_reason": None, "usage": start_usage}})
    for index, b in enumerate(blocks):
        if b["type"] == "text":
            block: Json = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in b["pieces"]]
        else:
            block = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": fragment} for fragment in b["fragments"]]
        events += _event("content_block_start", {"index": index, "content_block": block})
        if index == 0:
            events += _event("ping", {})
        for delta in deltas:
            events += _event("content_block_delta", {"index": index, "delta": delta})
        events += _event("content_block_stop", {"index": index})
    delta = {"stop_reason": "tool_use" if _is_tool_call(blocks) else "end_turn", "stop_sequence": None}
    events += _event("message_delta", {"delta": delta, "usage": {"output_tokens": 5}})
    return events + _event("message_stop", {})


def _openai_chunks(blocks: tuple[Json, ...]) -> str:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x"}

    def chunk(delta: Json | None, finish: str | None = None, usage: Json | None = None) -> str:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        return f"data: {json.dumps({**head, 'choices': choices, 'usage': usage})}\n\n"

    chunks = chunk({"role": "assistant", "content": ""})
    calls = 0
    for b in blocks:
        if b["type"] == "text":
            chunks += "".join(chunk({"content": piece}) for piece in b["pieces"])
            continue
        first = {"index": calls, "id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": ""}}
        chunks += chunk({"tool_calls": [first]})
        for fragment in b["fragments"]:
            chunks += chunk({"tool_calls": [{"index": calls, "function": {"arguments": fragment}}]})
        calls += 1
    chunks += chunk({}, "tool_calls" if calls else "stop")
    return chunks + chunk(None, usage=OPENAI_USAGE) + "data: [DONE]\n\n"


def streamed(upstream: Upstream, *blocks: Json) -> Answer:
    """A streamed answer of these blocks, in the upstream's events, written in pieces that split lines and tokens."""
    body = _anthropic_events(blocks) if upstream == "anthropic" else _openai_chunks(blocks)
    return {"sse": body, "sizes": [5, 11, 3, 17]}
