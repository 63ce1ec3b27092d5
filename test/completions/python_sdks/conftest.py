from __future__ import annotations

from collections.abc import Iterator

import pytest

from upstreams import CONTROL, new_key, reset


@pytest.fixture(autouse=True)
def fresh_upstreams() -> Iterator[None]:
    """Each test begins with nothing queued or seen, and ends having taken every answer it queued."""
    if not CONTROL:
        yield
        return
    reset()
    yield
    assert reset() == 0, "answers queued for the upstreams were never asked for"


@pytest.fixture
def key() -> str:
    """A key of a new account of its own (plan FREE, 100 completions a month)."""
    return new_key()
