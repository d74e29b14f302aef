"""The top-level fields of a secret (types-ts secret.ts): ``type`` and ``data``.

``data``'s shape depends on ``type`` (an object for most types, a JSON string for ``docker``,
``gcp`` and ``azure-sdk``), so the schema takes any value and ``rules.py`` judges it per type,
with every problem at its JSON path. Its OpenAPI schema says what a client may send.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import WithJsonSchema

from plinth.kinds.spec_model import TopLevelModel

SecretType = Literal[
    "opaque",
    "tls",
    "gcp",
    "aws",
    "ecr",
    "userpass",
    "keypair",
    "azure-sdk",
    "azure-connector",
    "docker",
    "dictionary",
    "nats-account",
]
SECRET_TYPES: tuple[str, ...] = get_args(SecretType)
#: Types whose ``data`` is a JSON document sent as a string (types-ts secret.ts).
STRING_TYPES = frozenset({"docker", "gcp", "azure-sdk"})

DATA_SCHEMA = {
    "anyOf": [{"type": "object"}, {"type": "string"}, {"type": "null"}],
    "description": (
        "The secret's values, in the shape its type has (an object; a JSON string for docker, gcp and "
        "azure-sdk). Sealed at rest; only -reveal answers it. Left out (or null) on a replace: the "
        "stored values stay."
    ),
}


class SecretFields(TopLevelModel):
    """The top-level fields a client may send for a secret."""

    type: SecretType
    data: Annotated[Any, WithJsonSchema(DATA_SCHEMA)] = None
