"""Reading an ASGI HTTP request: headers, query parameters and a bounded JSON body."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import orjson

from plinth.errors import BadRequest, PayloadTooLarge, RequestTimeout, UnsupportedMediaType, ValidationFailed
from plinth.server.limits import MAX_JSON_DEPTH, has_nul, json_too_deep, long_arrays, utf8_error

Scope = dict[str, Any]
JSON_TYPES = ("application/json", "application/merge-patch+json")
_TRUE = frozenset({"", "true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})


_ID_PREFIX = str(uuid.uuid4())[:24]  # random per process: ids stay unique across workers and restarts
_ID_COUNTER = itertools.count(1)


def next_request_id() -> str:
    """A UUID-shaped id: the process's random prefix and a counter (no system call per request)."""
    return f"{_ID_PREFIX}{next(_ID_COUNTER) & 0xFFFFFFFFFFFF:012x}"


@dataclass(slots=True)
class Request:
    method: str
    path: str
    headers: dict[bytes, bytes]
    query_string: bytes
    request_id: str
    scheme: str = "http"
    _params: dict[str, str] | None = field(default=None, repr=False)

    @classmethod
    def from_scope(cls, scope: Scope) -> Request:
        headers = dict(scope["headers"])
        supplied = headers.get(b"x-request-id", b"").decode("latin-1")
        request_id = supplied if 0 < len(supplied) <= 64 and supplied.replace("-", "").isalnum() else next_request_id()
        return cls(
            scope["method"], scope["path"], headers, scope["query_string"], request_id, scope.get("scheme", "http")
        )

    def param(self, name: str) -> str | None:
        if not self.query_string:
            return None
        if self._params is None:
            parsed = parse_qs(self.query_string.decode("latin-1"), keep_blank_values=True)
            self._params = {k: v[-1] for k, v in parsed.items()}
        return self._params.get(name)

    def flag(self, name: str) -> bool:
        """A boolean query parameter: absent is false; a value that is not a boolean is a 400.

        Strict on purpose: ``?dryRun=ture`` must not quietly write for real.
        """
        value = self.param(name)
        if value is None:
            return False
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise BadRequest(f"Query parameter '{name}' must be true or false", {"parameter": name})

    @property
    def base_url(self) -> str:
        host = self.headers.get(b"host", b"127.0.0.1").decode("latin-1")
        return f"{self.scheme}://{host}"


async def read_body(scope: Scope, receive: Any, request: Request, limit: int, timeout: float = 0) -> bytes:
    """The whole body: at most ``limit`` bytes (413), within ``timeout`` seconds (408; 0: no limit).

    The clock starts when the app starts, once the headers are in; a client that trickles its
    body gets 408 and its connection is closed, without holding any other request back.
    """
    declared = request.headers.get(b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"The request body is larger than {limit} bytes")
    if timeout <= 0:
        return await _read_all(receive, limit)
    try:
        async with asyncio.timeout(timeout):
            return await _read_all(receive, limit)
    except TimeoutError:
        message = f"The request body did not arrive within {timeout:g} s"
        raise RequestTimeout(message, {"timeout_s": timeout}, {"Connection": "close"}) from None


async def _read_all(receive: Any, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"The request body is larger than {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def decode_json(request: Request, raw: bytes) -> Any:
    """``None`` for an empty body; JSON otherwise (any ``*/json`` or ``*+json`` content type)."""
    if not raw.strip():
        return None
    ctype = request.headers.get(b"content-type", b"application/json").decode("latin-1").split(";")[0].strip().lower()
    if ctype not in JSON_TYPES and not ctype.endswith("+json"):
        raise UnsupportedMediaType(f"Content-Type '{ctype}' is not supported; send application/json")
    if json_too_deep(raw):
        raise BadRequest(
            f"The request body nests arrays and objects more than {MAX_JSON_DEPTH} levels deep",
            {"limit": MAX_JSON_DEPTH},
        )
    if has_nul(raw):
        raise BadRequest("Strings in the request body cannot contain U+0000 (NUL)")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        bad_utf8 = utf8_error(raw)
        if bad_utf8 is not None:
            raise BadRequest(f"The request body is not UTF-8: {bad_utf8}") from exc
        raise BadRequest(f"The request body is not valid JSON: {exc}") from exc
    too_long = long_arrays(raw, body)
    if too_long:
        raise ValidationFailed(too_long)
    return body
