"""POST /api/v1/messages and GET /api/v1/models through the official `anthropic` SDK, against an Anthropic upstream
(passed through) and an OpenAI-compatible one (translated), whole and streamed, and the errors as the SDK raises them.
The key goes in x-api-key, the SDK's default, unless a test says otherwise. Run by test/completions/python-sdks.test.ts
(``npm test``); skipped without it."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest

from common import CITY, FAST, HELLO, PNG, Weather
from upstreams import (
    SERVICES,
    UPSTREAMS,
    Upstream,
    answer,
    needs_services,
    new_key,
    overloaded,
    seen,
    streamed,
    text,
    tool,
    warp_clock,
    whole,
)

pytestmark = needs_services

WEATHER: Any = [
    {
        "name": "weather",
        "description": "The weather in a city",
        "input_schema": CITY,
    }
]


def client(upstreams: str, key: str, **options: Any) -> anthropic.Anthropic:
    """The SDK as an application makes it: the service's base URL, a key; no retries unless a test asks."""
    return anthropic.Anthropic(base_url=f"{SERVICES[upstreams]}/api", api_key=key, **{"max_retries": 0, **options})


def counting(statuses: list[int]) -> httpx2.Client:
    """An HTTP client for the SDK that notes the status of every response the SDK receives, retries included."""
    return anthropic.DefaultHttpxClient(event_hooks={"response": [lambda r: statuses.append(r.status_code)]})


def error_of(e: anthropic.APIStatusError) -> Any:
    """The ``error`` member of an error's Anthropic body."""
    assert isinstance(e.body, dict)
    return e.body["error"]


def texts(message: anthropic.types.Message) -> str:
    return "".join(b.text for b in message.content if b.type == "text")


# The happy path.


def test_a_whole_answer_passes_through_an_anthropic_upstream_with_the_key_in_x_api_key(key: str) -> None:
    answer("anthropic", whole("anthropic", text("Hello")))
    sdk = client("anthropic", key)
    # top_k left the SDK's parameters; the API takes it, and so does an Anthropic upstream.
    message = sdk.messages.create(model="fast", max_tokens=50, messages=HELLO, extra_body={"top_k": 5})
    assert [(b.type, b.text) for b in message.content if b.type == "text"] == [("text", "Hello")]
    assert message.model == "fast"
    assert message.stop_reason == "end_turn"
    [sent] = seen("anthropic")
    assert sent["path"] == "/v1/messages"
    assert sent["body"] == {"model": "claude-haiku-4-5", "max_tokens": 50, "messages": HELLO, "top_k": 5}
    assert sent["headers"]["x-api-key"] == "sk-test"
    assert key not in json.dumps(sent["headers"])


def test_a_whole_answer_from_an_openai_upstream_is_translated_with_the_key_as_a_bearer_token() -> None:
    answer("openai", whole("openai", text("Hi there")))
    sdk = anthropic.Anthropic(base_url=f"{SERVICES['openai']}/api", auth_token=new_key(), max_retries=0)
    message = sdk.messages.create(
        model="primary", max_tokens=50, system="Be brief", messages=HELLO, stop_sequences=["END"]
    )
    assert texts(message) == "Hi there"
    assert message.stop_reason == "end_turn"
    assert message.model == "primary"
    [sent] = seen("openai")
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["model"] == "gpt-4.1"
    assert sent["body"]["max_tokens"] == 50
    assert sent["body"]["stop"] == ["END"]
    assert sent["body"]["messages"][0] == {"role": "system", "content": "Be brief"}
    assert sent["body"]["messages"][1:] == [{"role": "user", "content": "Say hello"}]


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_streamed_answer(upstream: Upstream, key: str) -> None:
    answer(upstream, streamed(upstream, text("Hel", "lo, ", "world")))
    events = list(client(upstream, key).messages.create(model="fast", max_tokens=50, messages=HELLO, stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert "".join(d.text for d in deltas if d.type == "text_delta") == "Hello, world"
    start = events[0]
    assert start.type == "message_start" and start.message.model == "fast"
    [stop] = [e for e in events if e.type == "message_delta"]
    assert stop.type == "message_delta" and stop.delta.stop_reason == "end_turn"
    assert seen(upstream)[0]["body"]["stream"] is True


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_usage_and_cached_tokens_whole_and_streamed(upstream: Upstream, key: str) -> None:
    answer(upstream, whole(upstream, text("Hi")), streamed(upstream, text("H", "i")))
    system: Any = [{"type": "text", "text": "A long policy", "cache_control": {"type": "ephemeral"}}]
    sdk = client(upstream, key)
    message = sdk.messages.create(model="fast", max_tokens=50, system=system, messages=HELLO)
    with sdk.messages.stream(model="fast", max_tokens=50, system=system, messages=HELLO) as stream:
        final = stream.get_final_message()
    # From OpenAI: input = prompt 20 - cached 8.
    input_tokens, cache_read, cache_write, output = (12, 3, 4, 5) if upstream == "anthropic" else (12, 8, None, 7)
    for usage in (message.usage, final.usage):
        assert usage.input_tokens == input_tokens
        assert usage.cache_read_input_tokens == cache_read
        assert (usage.cache_creation_input_tokens or None) == cache_write
        assert usage.output_tokens == output
    if upstream == "anthropic":
        assert [r["body"]["system"] for r in seen("anthropic")] == [system, system]


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_tool_call_its_result_sent_back_and_the_final_answer(upstream: Upstream, key: str) -> None:
    answer(
        upstream,
        whole(upstream, tool("toolu_1", "weather", '{"city": "Paris"}')),
        whole(upstream, text("Sunny in Paris")),
    )
    sdk = client(upstream, key)
    first = sdk.messages.create(model="fast", max_tokens=50, messages=HELLO, tools=WEATHER)
    assert first.stop_reason == "tool_use"
    [use] = [b for b in first.content if b.type == "tool_use"]
    assert (use.id, use.name, use.input) == ("toolu_1", "weather", {"city": "Paris"})
    messages: Any = [
        *HELLO,
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "22°C, sunny"}]},
    ]
    final = sdk.messages.create(model="fast", max_tokens=50, messages=messages, tools=WEATHER)
    assert texts(final) == "Sunny in Paris"
    assert final.stop_reason == "end_turn"
    sent = seen(upstream)[1]["body"]
    if upstream == "openai":
        assert sent["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "The weather in a city",
                    "parameters": WEATHER[0]["input_schema"],
                },
            }
        ]
        call = {"id": "toolu_1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}
        assert sent["messages"][1:] == [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "22°C, sunny"},
        ]
    else:
        assert sent["tools"] == WEATHER
        assert sent["messages"][1]["content"][0]["type"] == "tool_use"
        assert sent["messages"][2] == messages[2]


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_two_parallel_tool_calls_streamed(upstream: Upstream, key: str) -> None:
    answer(
        upstream,
        streamed(
            upstream,
            tool("toolu_a", "weather", '{"ci', 'ty": "Pa', 'ris"}'),
            tool("toolu_b", "time", '{"zo', 'ne": "CE', 'T"}'),
        ),
    )
    with client(upstream, key).messages.stream(model="fast", max_tokens=50, messages=HELLO, tools=WEATHER) as stream:
        final = stream.get_final_message()
    assert [(b.id, b.name, b.input) for b in final.content if b.type == "tool_use"] == [
        ("toolu_a", "weather", {"city": "Paris"}),
        ("toolu_b", "time", {"zone": "CET"}),
    ]
    assert [b.type for b in final.content] == ["tool_use", "tool_use"]
    assert final.stop_reason == "tool_use"


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize(
    "source",
    [
        {"type": "base64", "media_type": "image/png", "data": PNG},
        {"type": "url", "url": "https://example.com/dot.png"},
    ],
)
def test_an_image(upstream: Upstream, source: Any, key: str) -> None:
    answer(upstream, whole(upstream, text("A dot")))
    content: Any = [{"type": "text", "text": "What is this?"}, {"type": "image", "source": source}]
    message = client(upstream, key).messages.create(
        model="fast", max_tokens=50, messages=[{"role": "user", "content": content}]
    )
    assert texts(message) == "A dot"
    [sent] = seen(upstream)
    if upstream == "anthropic":
        assert sent["body"]["messages"][0]["content"] == content
        return
    url = source["url"] if source["type"] == "url" else f"data:image/png;base64,{PNG}"
    assert sent["body"]["messages"][0]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": url}},
    ]


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_structured_output(upstream: Upstream, key: str) -> None:
    answer(upstream, whole(upstream, text('{"city": "Par', 'is", "celsius": 22}')))
    message = client(upstream, key).messages.parse(model="fast", max_tokens=50, messages=HELLO, output_format=Weather)
    assert message.parsed_output == Weather(city="Paris", celsius=22)
    sent = seen(upstream)[0]["body"]
    schema = Weather.model_json_schema()
    if upstream == "anthropic":
        assert sent["output_config"]["format"]["type"] == "json_schema"
        assert sent["output_config"]["format"]["schema"]["properties"] == schema["properties"]
    else:
        assert sent["response_format"]["type"] == "json_schema"
        assert sent["response_format"]["json_schema"]["schema"]["properties"] == schema["properties"]


def test_the_models_are_the_aliases_in_anthropics_list(key: str) -> None:
    models = list(client("anthropic", key).models.list())
    assert {"primary", "fast"} <= {m.id for m in models}
    assert {m.type for m in models} == {"model"}


@pytest.mark.parametrize(("down", "up"), [("anthropic", "openai"), ("openai", "anthropic")])
def test_a_fallback_to_the_other_protocol_mid_list_whole_and_streamed(down: Upstream, up: Upstream, key: str) -> None:
    answer(down, overloaded(down), overloaded(down))
    answer(up, whole(up, text("Hi there")), streamed(up, text("Hi", " again")))
    sdk = client(f"{down},{up}", key)
    message = sdk.messages.create(model="fast", max_tokens=50, messages=HELLO)
    assert texts(message) == "Hi there"
    assert message.model == "fast"
    with sdk.messages.stream(model="fast", max_tokens=50, messages=HELLO) as stream:
        assert "".join(stream.text_stream) == "Hi again"
    assert [r["body"]["model"] for r in seen(down)] == [FAST[down]] * 2
    assert [r["body"]["model"] for r in seen(up)] == [FAST[up]] * 2


# The errors.


def test_a_wrong_key_in_either_header_is_an_authentication_error() -> None:
    for sdk in (
        client("anthropic", "sk_wrong"),
        anthropic.Anthropic(base_url=f"{SERVICES['anthropic']}/api", auth_token="sk_wrong", max_retries=0),
    ):
        with pytest.raises(anthropic.AuthenticationError) as e:
            sdk.messages.create(model="fast", max_tokens=5, messages=HELLO)
        assert e.value.status_code == 401
        assert isinstance(e.value.body, dict) and e.value.body["type"] == "error"
        assert error_of(e.value)["type"] == "authentication_error"
        assert error_of(e.value)["code"] == "unauthorized"
    assert seen("anthropic") == []


def test_a_429_is_retried_after_its_retry_after() -> None:
    key = new_key(rate_limit=1)
    statuses: list[int] = []
    sdk = client("anthropic", key, max_retries=2, http_client=counting(statuses))
    sdk.messages.create(model="fast", max_tokens=5, messages=HELLO)
    # The window of a minute nearly passed: the next call is refused with a retry-after of a second or two, which
    # the SDK waits before it tries again.
    warp_clock()
    message = sdk.messages.create(model="fast", max_tokens=5, messages=HELLO)
    assert texts(message) == "Hello"
    assert statuses == [200, 429, 200]
    assert len(seen("anthropic")) == 2


def test_a_spent_quota_is_a_429_the_sdk_does_not_retry() -> None:
    statuses: list[int] = []
    sdk = client("anthropic", new_key(plan="STARTER"), max_retries=2, http_client=counting(statuses))
    sdk.messages.create(model="fast", max_tokens=5, messages=HELLO)
    with pytest.raises(anthropic.RateLimitError) as e:
        sdk.messages.create(model="fast", max_tokens=5, messages=HELLO)
    assert error_of(e.value)["type"] == "rate_limit_error"
    assert error_of(e.value)["code"] == "quota_exceeded"
    assert e.value.response.headers["x-should-retry"] == "false"
    assert statuses == [200, 429]
    assert len(seen("anthropic")) == 1


def test_an_unknown_model_is_not_found(key: str) -> None:
    with pytest.raises(anthropic.NotFoundError) as e:
        client("anthropic", key).messages.create(model="claude-x", max_tokens=5, messages=HELLO)
    assert error_of(e.value)["code"] == "model_not_found"
    assert seen("anthropic") == []


def test_a_model_the_key_may_not_call_is_permission_denied() -> None:
    key = new_key(models=["fast"])
    with pytest.raises(anthropic.PermissionDeniedError) as e:
        client("anthropic", key).messages.create(model="primary", max_tokens=5, messages=HELLO)
    assert error_of(e.value)["code"] == "model_not_allowed"
    assert seen("anthropic") == []


def test_a_member_openai_cannot_express_is_refused_before_any_upstream_call(key: str) -> None:
    with pytest.raises(anthropic.BadRequestError) as e:
        client("openai", key).messages.create(model="fast", max_tokens=5, messages=HELLO, extra_body={"top_k": 5})
    assert error_of(e.value)["type"] == "invalid_request_error"
    assert "top_k" in error_of(e.value)["message"]
    assert seen("openai") == []
