"""Client library for the Studio Public REST API: ``Studio`` (sync) and ``AsyncStudio`` (asyncio)."""

from . import webhooks
from ._client import AsyncStudio, AsyncStudioRaw, Studio, StudioRaw
from ._core import RawResponse, RequestOptions, __version__
from ._errors import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    InvalidRequestError,
    PermissionDeniedError,
    QuotaExceededError,
    RateLimitError,
    ServerError,
    StudioError,
)
from ._stream import AsyncCompletionStream, CompletionStream, DeltaEvent, DoneEvent, StreamEvent
from ._types import (
    Caller,
    Completion,
    Lead,
    LeadCreated,
    LeadInput,
    LeadPage,
    Message,
    OpenApiDocument,
    Quota,
    Usage,
    User,
    Utm,
)
from .webhooks import WebhookVerificationError

__all__ = [
    "APIConnectionError",
    "APITimeoutError",
    "AsyncCompletionStream",
    "AsyncStudio",
    "AsyncStudioRaw",
    "AuthenticationError",
    "Caller",
    "Completion",
    "CompletionStream",
    "DeltaEvent",
    "DoneEvent",
    "InvalidRequestError",
    "Lead",
    "LeadCreated",
    "LeadInput",
    "LeadNote",
    "LeadPage",
    "Message",
    "OpenApiDocument",
    "PermissionDeniedError",
    "Quota",
    "QuotaExceededError",
    "RateLimitError",
    "RawResponse",
    "RequestOptions",
    "ServerError",
    "StreamEvent",
    "Studio",
    "StudioError",
    "StudioRaw",
    "Usage",
    "User",
    "Utm",
    "WebhookVerificationError",
    "__version__",
    "webhooks",
]
