"""What the client raises: an API answer that is not 2xx, or no usable answer at all.

Tree::

    plinth.errors.APIError          the server answered with a non-2xx status
        (any subclass, chosen by status; ``.response`` holds the raw answer)
    TransportError                  no HTTP answer: refused, reset, timeout, TLS failure

The two are kept apart (as httpx does) because they mean different things to a user: the
first is the server's verdict, the second says the server was never heard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from plinth.errors import APIError


@dataclass(frozen=True, slots=True)
class Response:
    """One HTTP answer as received: status, reason phrase, headers in arrival order, body."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    url: str = ""
    elapsed: float = 0.0

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in self.headers:
            if key.lower() == lowered:
                return value
        return None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as ``JSON.parse`` would read it; ``None`` for an empty body.

        A body that is not JSON comes back as its text, as the official CLI treats it.
        """
        from plinth.client.jsvalues import parse_json

        if not self.body:
            return None
        try:
            return parse_json(self.text)
        except ValueError:
            return self.text


@dataclass(eq=False)
class TransportError(Exception):
    """No HTTP answer. ``code`` is a stable Node-style name (``ECONNREFUSED``, ``ETIMEDOUT``,
    ``DEPTH_ZERO_SELF_SIGNED_CERT``, ...) so scripts written against the official CLI keep working."""

    code: str
    message: str
    attempts: int = 1
    details: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


class RemoteError(APIError):
    """An :class:`APIError` a server sent. Every instance is also the error-tree class for its
    status (``NotFound`` for 404, ...), so callers can catch either."""

    response: Response
    #: what the official CLI prints for it (see :func:`error_from_response`)
    wire_body: dict[str, Any]


@cache
def _error_class(status: int) -> type[RemoteError]:
    """The error-tree class for ``status`` mixed with :class:`RemoteError`; statuses outside the
    tree get a class of their own."""
    for candidate in _all_subclasses(APIError):
        if candidate.status == status and candidate.__name__ != "ValidationFailed":
            return type(f"Remote{candidate.__name__}", (candidate, RemoteError), {})
    return type(f"HTTP{status}Error", (RemoteError,), {"status": status, "code": f"http_{status}"})


def _all_subclasses(cls: type[APIError]) -> list[type[APIError]]:
    found: list[type[APIError]] = []
    for sub in cls.__subclasses__():
        if issubclass(sub, RemoteError):
            continue
        found.append(sub)
        found.extend(_all_subclasses(sub))
    return found


def error_from_response(response: Response) -> RemoteError:
    """Build the error for a non-2xx answer from its ``{status, message, code, details, id}``.

    ``error.wire_body`` is what the official CLI would print for it: the parsed body when it has a
    truthy ``status``, else ``{status: <http status>, message: <body text or JSON>}``.
    """
    parsed = response.json()
    if isinstance(parsed, dict) and parsed.get("status"):
        body: dict[str, Any] = parsed
        message = str(parsed.get("message", ""))
    else:
        body = {"status": response.status, "message": "" if parsed is None else parsed}
        message = parsed if isinstance(parsed, str) else response.reason
    error = _error_class(response.status)(message or response.reason, details=body.get("details"))
    error.response = response
    error.wire_body = body
    return error


def error_body(error: APIError) -> dict[str, Any]:
    """The printable body of an error made by :func:`error_from_response` (or a plain APIError)."""
    if isinstance(error, RemoteError):
        return error.wire_body
    return {"status": error.status, "message": error.message, "code": error.code}
