"""What the tests of both SDKs ask the services."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

HELLO: Any = [{"role": "user", "content": "Say hello"}]
# A 1x1 PNG.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
# The parameters of the tool `weather`.
CITY: Any = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
# The model each upstream is sent for the alias `fast`.
FAST = {"openai": "gpt-4.1-mini", "anthropic": "claude-haiku-4-5"}


class Weather(BaseModel):
    """The structured output the JSON tests ask for."""

    city: str
    celsius: int
