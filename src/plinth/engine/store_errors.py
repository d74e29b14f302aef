"""Storage errors as clients see them: the one place a ``StorageError`` becomes an ``APIError``.

Storage speaks storage (``not_found``, ``exists``, ``invalid``, ``conflict``, ``unavailable``);
the engine answers with the kind and name the client asked about attached. An unreachable
store is a 503 with ``Retry-After`` whose message names no host: the driver's reason stays in
the server's log.
"""

from __future__ import annotations

from plinth.errors import BadRequest, Conflict, ServiceUnavailable, not_found
from plinth.storage.base import StorageError

#: Seconds a client is asked to wait before retrying when the store is unreachable.
RETRY_AFTER_S = 1


def storage_error(exc: StorageError, kind: str, name: str) -> Exception:
    """Storage speaks storage; translate with the kind and name attached."""
    if exc.code == "not_found":
        return not_found(kind, name)
    if exc.code == "exists":
        return Conflict(f"{kind.capitalize()} '{name}' already exists", {"kind": kind, "name": name})
    if exc.code == "invalid":
        return BadRequest(f"The query cannot be run: {exc}")
    if exc.code == "conflict":
        return Conflict(
            f"{kind.capitalize()} '{name}' was modified by another request; read it again and retry",
            {"kind": kind, "name": name},
        )
    return storage_unavailable()


def storage_unavailable() -> ServiceUnavailable:
    """The answer while the store cannot be reached: the reason stays in the server's log,
    since a driver's message names hosts and ports a client has no business knowing."""
    return ServiceUnavailable(
        "The data store is unavailable; try again shortly", headers={"Retry-After": str(RETRY_AFTER_S)}
    )
