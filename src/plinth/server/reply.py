"""What a route answers (:class:`Reply`) and what it serves from (:class:`Services`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from plinth.engine.access import AccessControl
from plinth.engine.service import Engine
from plinth.server.signing import SigningCache


@dataclass
class Reply:
    status: int
    body: bytes
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    content_type: bytes = b"application/json"
    #: A streamed body instead of ``body`` (a watch): called with ASGI ``send`` and ``receive``
    #: once the status and headers are sent.
    stream: Callable[[Any, Any], Awaitable[None]] | None = None


@dataclass
class Services:
    engine: Engine
    access: AccessControl
    signing: SigningCache
