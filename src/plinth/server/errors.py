"""The one place an error becomes an HTTP response body.

``APIError`` renders as ``{status, message, code, details, id}``. An unreachable store is a
503 wherever it is noticed (authentication and policy lookups read the store too, not only the
engine). Anything else is a bug: it is logged with the request id and its traceback, and the
client gets a 500 that says only that, with the id to quote (never a stack trace).
"""

from __future__ import annotations

import logging

import orjson

from plinth.engine.store_errors import storage_unavailable
from plinth.errors import APIError
from plinth.storage.base import StorageError

log = logging.getLogger("plinth.server")


def render_error(exc: BaseException, request_id: str) -> tuple[int, bytes, dict[str, str]]:
    if isinstance(exc, StorageError) and exc.code == "unavailable":
        exc = storage_unavailable()
    if isinstance(exc, APIError):
        return exc.status, orjson.dumps(exc.body(request_id)), exc.headers
    log.error("unhandled error in request %s", request_id, exc_info=exc)
    body = {
        "status": 500,
        "message": f"Internal server error; quote request id {request_id} when reporting it",
        "code": "internal_error",
        "id": request_id,
    }
    return 500, orjson.dumps(body), {}
