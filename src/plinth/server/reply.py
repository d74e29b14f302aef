"""What a route answers (:class:`Reply`) and what it serves from (:class:`Services`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from plinth.engine.access import AccessControl
from plinth.engine.service import Engine
from plinth.server.signing import SigningCache


@dataclass
class Reply:
    status: int
    body: bytes
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    content_type: bytes = b"application/json"


@dataclass
class Services:
    engine: Engine
    access: AccessControl
    signing: SigningCache
