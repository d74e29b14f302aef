"""The one error vocabulary shared by the server, the engine, the kinds and the client.

Every failure a client can see is an :class:`APIError`. It renders to the wire shape
``{status, message, code, details, id}`` in exactly one place (``plinth.server.errors``);
the CLI parses the same shape back (``plinth.client``).

Tree::

    APIError                      status, code, message, details
    ├── BadRequest                400 bad_request   (malformed JSON, bad query parameters)
    │   └── ValidationFailed      400 invalid       (details.errors: [{path, message}, ...])
    ├── Unauthorized              401 unauthorized
    ├── Forbidden                 403 forbidden     (details.permission names what was missing)
    ├── NotFound                  404 not_found     (details: {kind, name} when about an item)
    ├── MethodNotAllowed          405 method_not_allowed (details.allow, and the Allow header)
    ├── RequestTimeout            408 request_timeout (the request did not arrive in time)
    ├── Conflict                  409 conflict      (stale version, name taken, dependants)
    ├── PayloadTooLarge           413 payload_too_large
    ├── UnsupportedMediaType      415 unsupported_media_type
    ├── TooManyRequests           429 too_many_requests (the Retry-After header says when to retry)
    ├── HeadersTooLarge           431 headers_too_large
    └── ServiceUnavailable        503 unavailable   (the store cannot be reached)

Validation errors are collected, never raised one by one: a hook returns a list of
:class:`FieldError`, and the engine raises one :class:`ValidationFailed` carrying all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class FieldError:
    """One offending field: ``path`` is a JSON path such as ``spec.ports[0].number``."""

    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class APIError(Exception):
    """An error with an HTTP status, a stable machine ``code`` and optional ``details``."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, details: Any = None, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.details = details
        self.headers = headers or {}

    def body(self, request_id: str) -> dict[str, Any]:
        """The wire shape; ``request_id`` is echoed so a user can quote it in a report."""
        body: dict[str, Any] = {"status": self.status, "message": self.message, "code": self.code}
        if self.details is not None:
            body["details"] = self.details
        body["id"] = request_id
        return body


class BadRequest(APIError):
    status = 400
    code = "bad_request"


class ValidationFailed(BadRequest):
    """Raised once with every :class:`FieldError` found, so a client can fix them in one go."""

    code = "invalid"

    def __init__(self, errors: list[FieldError], kind: str | None = None, name: str | None = None):
        self.errors = list(errors)
        first = self.errors[0] if self.errors else FieldError("", "invalid")
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        message = f"Invalid {kind or 'request'}: {first.path or '(body)'}: {first.message}{more}"
        details: dict[str, Any] = {}
        if kind:
            details["kind"] = kind
        if name:
            details["name"] = name
        details["errors"] = [e.as_dict() for e in self.errors]
        super().__init__(message, details)


class Unauthorized(APIError):
    status = 401
    code = "unauthorized"


class Forbidden(APIError):
    status = 403
    code = "forbidden"


class NotFound(APIError):
    status = 404
    code = "not_found"


class MethodNotAllowed(APIError):
    """``details.allow`` lists the methods the path answers; it is sent as the ``Allow`` header too."""

    status = 405
    code = "method_not_allowed"

    def __init__(self, message: str, details: Any = None, headers: dict[str, str] | None = None):
        allow = details.get("allow") if isinstance(details, dict) else None
        if allow and not headers:
            headers = {"Allow": allow}
        super().__init__(message, details, headers)


class RequestTimeout(APIError):
    status = 408
    code = "request_timeout"


class Conflict(APIError):
    status = 409
    code = "conflict"


class Gone(APIError):
    """A watch asked to resume from a version the change log no longer holds (or never held):
    the client lists again and watches from the list's version (docs/watch.md)."""

    status = 410
    code = "list_again"


class PayloadTooLarge(APIError):
    status = 413
    code = "payload_too_large"


class UnsupportedMediaType(APIError):
    status = 415
    code = "unsupported_media_type"


class TooManyRequests(APIError):
    status = 429
    code = "too_many_requests"


class WatchTooSlow(APIError):
    """A watch's buffer passed its bound: the client reads slower than the changes come. It
    resumes from the last version it read (docs/watch.md)."""

    status = 429
    code = "watch_too_slow"


class HeadersTooLarge(APIError):
    status = 431
    code = "headers_too_large"


class ServiceUnavailable(APIError):
    status = 503
    code = "unavailable"


def not_found(kind: str, name: str) -> NotFound:
    """The one message shape for a missing item (matches the official API's wording)."""
    return NotFound(f"{kind.capitalize()} '{name}' not found", {"kind": kind, "name": name})


__all__ = [
    "APIError",
    "BadRequest",
    "Conflict",
    "FieldError",
    "Forbidden",
    "Gone",
    "HeadersTooLarge",
    "MethodNotAllowed",
    "NotFound",
    "PayloadTooLarge",
    "RequestTimeout",
    "ServiceUnavailable",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "ValidationFailed",
    "WatchTooSlow",
    "not_found",
]
