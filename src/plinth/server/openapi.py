"""The OpenAPI 3.1 document, generated from the kind declarations (placeholder until filled)."""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from plinth.kinds.base import KindSpec


def openapi_document(kinds: Mapping[str, KindSpec]) -> bytes:
    doc = {"openapi": "3.1.0", "info": {"title": "Plinth", "version": "0.1.0"}, "paths": {}}
    return orjson.dumps(doc)
