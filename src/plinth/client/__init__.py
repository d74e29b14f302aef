"""The thin HTTP client for the API (see ``plinth.client.http`` for its contract)."""

from plinth.client.errors import RemoteError, Response, TransportError, error_body, error_from_response
from plinth.client.http import ApiClient, PreparedRequest, join_url
from plinth.client.retry import NO_RETRY, RetryPolicy

__all__ = [
    "NO_RETRY",
    "ApiClient",
    "PreparedRequest",
    "RemoteError",
    "Response",
    "RetryPolicy",
    "TransportError",
    "error_body",
    "error_from_response",
    "join_url",
]
