"""POST /api/v1/chat/completions and GET /api/v1/models through the official `openai` SDK, against an OpenAI-compatible
upstream (passed through) and an Anthropic one (translated), whole and streamed, and the errors as the SDK raises them.
Run by test/completions/python-sdks.test.ts (``npm test``); skipped without it."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest
from openai.types.chat import ChatCompletionMessageFunctionToolCall

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
        "type": "function",
        "function": {
            "name": "weather",
            "description": "The weather in a city",
            "parameters": CITY,
        },
    }
]


def client(upstreams: str, key: str, **options: Any) -> openai.OpenAI:
    """The SDK as an application makes it: the service's base URL, a key; no retries unless a test asks."""
    return openai.OpenAI(base_url=f"{SERVICES[upstreams]}/api/v1", api_key=key, **{"max_retries": 0, **options})


def counting(statuses: list[int]) -> httpx2.Client:
    """An HTTP client for the SDK that notes the status of every response the SDK receives, retries included."""
    return openai.DefaultHttpxClient(event_hooks={"response": [lambda r: statuses.append(r.status_code)]})


# The happy path.


def test_a_whole_answer_passes_through_an_openai_upstream(key: str) -> None:
    answer("openai", whole("openai", text("Hi there")))
    completion = client("openai", key).chat.completions.create(model="fast", messages=HELLO, max_tokens=50)
    assert completion.choices[0].message.content == "Hi there"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "fast"
    [sent] = seen("openai")
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"] == {"model": "gpt-4.1-mini", "messages": HELLO, "max_tokens": 50}
    assert key not in json.dumps(sent["headers"])


def test_a_whole_answer_from_an_anthropic_upstream_is_translated(key: str) -> None:
    answer("anthropic", whole("anthropic", text("Hello")))
    messages: Any = [{"role": "system", "content": "Be brief"}, *HELLO]
    completion = client("anthropic", key).chat.completions.create(model="primary", messages=messages, stop=["END"])
    assert completion.choices[0].message.content == "Hello"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "primary"
    [sent] = seen("anthropic")
    assert sent["path"] == "/v1/messages"
    assert sent["body"]["model"] == "claude-sonnet-4-5"
    assert sent["body"]["system"] == [{"type": "text", "text": "Be brief"}]
    assert sent["body"]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Say hello"}]}]
    assert sent["body"]["stop_sequences"] == ["END"]
    assert key not in json.dumps(sent["headers"])


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_streamed_answer(upstream: Upstream, key: str) -> None:
    answer(upstream, streamed(upstream, text("Hel", "lo, ", "world")))
    stream = client(upstream, key).chat.completions.create(model="fast", messages=HELLO, stream=True)
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello, world"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert {c.model for c in chunks} == {"fast"}
    assert all(c.usage is None for c in chunks), "no usage chunk unless asked for"
    assert seen(upstream)[0]["body"]["stream"] is True


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_usage_and_cached_tokens_whole_and_streamed(upstream: Upstream, key: str) -> None:
    answer(upstream, whole(upstream, text("Hi")), streamed(upstream, text("H", "i")))
    sdk = client(upstream, key)
    completion = sdk.chat.completions.create(model="fast", messages=HELLO)
    stream = sdk.chat.completions.create(
        model="fast", messages=HELLO, stream=True, stream_options={"include_usage": True}
    )
    last = list(stream)[-1]
    assert last.choices == []
    # From Anthropic: prompt = input 12 + cache reads 3 + cache writes 4.
    prompt, cached, completion_tokens = (20, 8, 7) if upstream == "openai" else (19, 3, 5)
    for usage in (completion.usage, last.usage):
        assert usage is not None and usage.prompt_tokens_details is not None
        assert usage.prompt_tokens == prompt
        assert usage.prompt_tokens_details.cached_tokens == cached
        assert usage.prompt_tokens_details.cache_write_tokens == (4 if upstream == "anthropic" else None)
        assert usage.completion_tokens == completion_tokens
        assert usage.total_tokens == prompt + completion_tokens


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_tool_call_its_result_sent_back_and_the_final_answer(upstream: Upstream, key: str) -> None:
    answer(
        upstream,
        whole(upstream, tool("call_1", "weather", '{"city": "Paris"}')),
        whole(upstream, text("Sunny in Paris")),
    )
    sdk = client(upstream, key)
    first = sdk.chat.completions.create(model="fast", messages=HELLO, tools=WEATHER)
    assert first.choices[0].finish_reason == "tool_calls"
    [call] = first.choices[0].message.tool_calls or []
    assert isinstance(call, ChatCompletionMessageFunctionToolCall)
    assert call.id == "call_1" and call.function.name == "weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}
    messages = [
        *HELLO,
        first.choices[0].message,
        {"role": "tool", "tool_call_id": call.id, "content": "22°C, sunny"},
    ]
    final = sdk.chat.completions.create(model="fast", messages=messages, tools=WEATHER)
    assert final.choices[0].message.content == "Sunny in Paris"
    assert final.choices[0].finish_reason == "stop"
    sent = seen(upstream)[1]["body"]
    if upstream == "anthropic":
        assert sent["tools"][0]["name"] == "weather"
        assert sent["tools"][0]["input_schema"] == WEATHER[0]["function"]["parameters"]
        use = {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}}
        result = {"type": "tool_result", "tool_use_id": "call_1", "content": "22°C, sunny"}
        assert sent["messages"][1:] == [
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ]
    else:
        assert sent["tools"] == WEATHER
        assert sent["messages"][1]["tool_calls"][0]["id"] == "call_1"
        assert sent["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": "22°C, sunny"}


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_two_parallel_tool_calls_streamed(upstream: Upstream, key: str) -> None:
    answer(
        upstream,
        streamed(
            upstream,
            tool("call_a", "weather", '{"ci', 'ty": "Pa', 'ris"}'),
            tool("call_b", "time", '{"zo', 'ne": "CE', 'T"}'),
        ),
    )
    with client(upstream, key).chat.completions.stream(model="fast", messages=HELLO, tools=WEATHER) as stream:
        final = stream.get_final_completion()
    calls = final.choices[0].message.tool_calls or []
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("call_a", "weather", {"city": "Paris"}),
        ("call_b", "time", {"zone": "CET"}),
    ]
    assert final.choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("url", [f"data:image/png;base64,{PNG}", "https://example.com/dot.png"])
def test_an_image(upstream: Upstream, url: str, key: str) -> None:
    answer(upstream, whole(upstream, text("A dot")))
    content: Any = [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": url}}]
    completion = client(upstream, key).chat.completions.create(
        model="fast", messages=[{"role": "user", "content": content}]
    )
    assert completion.choices[0].message.content == "A dot"
    [sent] = seen(upstream)
    if upstream == "openai":
        assert sent["body"]["messages"][0]["content"] == content
        return
    source = (
        {"type": "base64", "media_type": "image/png", "data": PNG}
        if url.startswith("data:")
        else {"type": "url", "url": url}
    )
    assert sent["body"]["messages"][0]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image", "source": source},
    ]


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_json_schema_answer(upstream: Upstream, key: str) -> None:
    answer(upstream, whole(upstream, text('{"city": "Par', 'is", "celsius": 22}')))
    completion = client(upstream, key).chat.completions.parse(model="fast", messages=HELLO, response_format=Weather)
    assert completion.choices[0].message.parsed == Weather(city="Paris", celsius=22)
    sent = seen(upstream)[0]["body"]
    schema = Weather.model_json_schema()
    if upstream == "openai":
        assert sent["response_format"]["type"] == "json_schema"
        assert sent["response_format"]["json_schema"]["name"] == "Weather"
        assert sent["response_format"]["json_schema"]["schema"]["properties"] == schema["properties"]
    else:
        assert sent["output_config"]["format"]["type"] == "json_schema"
        assert sent["output_config"]["format"]["schema"]["properties"] == schema["properties"]
        assert sent["output_config"]["format"]["schema"]["additionalProperties"] is False


def test_the_models_are_the_aliases(key: str) -> None:
    models = list(client("openai", key).models.list())
    assert {"primary", "fast"} <= {m.id for m in models}
    assert {m.object for m in models} == {"model"}


@pytest.mark.parametrize(("down", "up"), [("anthropic", "openai"), ("openai", "anthropic")])
def test_a_fallback_to_the_other_protocol_mid_list_whole_and_streamed(down: Upstream, up: Upstream, key: str) -> None:
    answer(down, overloaded(down), overloaded(down))
    answer(up, whole(up, text("Hi there")), streamed(up, text("Hi", " again")))
    sdk = client(f"{down},{up}", key)
    completion = sdk.chat.completions.create(model="fast", messages=HELLO)
    assert completion.choices[0].message.content == "Hi there"
    assert completion.model == "fast"
    stream = sdk.chat.completions.create(model="fast", messages=HELLO, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "Hi again"
    assert [r["body"]["model"] for r in seen(down)] == [FAST[down]] * 2
    assert [r["body"]["model"] for r in seen(up)] == [FAST[up]] * 2


# The errors.


def test_a_wrong_key_is_an_authentication_error() -> None:
    with pytest.raises(openai.AuthenticationError) as e:
        client("openai", "sk_wrong").chat.completions.create(model="fast", messages=HELLO)
    assert e.value.status_code == 401
    assert e.value.code == "unauthorized"
    assert seen("openai") == []


def test_a_429_is_retried_after_its_retry_after() -> None:
    key = new_key(rate_limit=1)
    statuses: list[int] = []
    sdk = client("openai", key, max_retries=2, http_client=counting(statuses))
    sdk.chat.completions.create(model="fast", messages=HELLO)
    # The window of a minute nearly passed: the next call is refused with a retry-after of a second or two, which
    # the SDK waits before it tries again.
    warp_clock()
    completion = sdk.chat.completions.create(model="fast", messages=HELLO)
    assert completion.choices[0].message.content == "Hi there"
    assert statuses == [200, 429, 200]
    assert len(seen("openai")) == 2


def test_a_spent_quota_is_a_429_the_sdk_does_not_retry() -> None:
    statuses: list[int] = []
    sdk = client("openai", new_key(plan="STARTER"), max_retries=2, http_client=counting(statuses))
    sdk.chat.completions.create(model="fast", messages=HELLO)
    with pytest.raises(openai.RateLimitError) as e:
        sdk.chat.completions.create(model="fast", messages=HELLO)
    assert e.value.code == "quota_exceeded"
    assert e.value.type == "insufficient_quota"
    assert e.value.response.headers["x-should-retry"] == "false"
    assert statuses == [200, 429]
    assert len(seen("openai")) == 1


def test_an_unknown_model_is_not_found(key: str) -> None:
    with pytest.raises(openai.NotFoundError) as e:
        client("openai", key).chat.completions.create(model="gpt-5", messages=HELLO)
    assert e.value.code == "model_not_found"
    assert seen("openai") == []


def test_a_model_the_key_may_not_call_is_permission_denied() -> None:
    key = new_key(models=["fast"])
    with pytest.raises(openai.PermissionDeniedError) as e:
        client("openai", key).chat.completions.create(model="primary", messages=HELLO)
    assert e.value.code == "model_not_allowed"
    assert seen("openai") == []


def test_a_member_anthropic_cannot_express_is_refused_before_any_upstream_call(key: str) -> None:
    with pytest.raises(openai.BadRequestError) as e:
        client("anthropic", key).chat.completions.create(model="fast", messages=HELLO, logprobs=True)
    assert e.value.param == "logprobs"
    assert "logprobs" in e.value.message
    assert seen("anthropic") == []
