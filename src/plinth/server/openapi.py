"""``GET /openapi.json``: an OpenAPI 3.1 document generated from the kind declarations.

Nothing in it is written by hand per kind: paths and operations come from each kind's scope
and verbs (``_openapi_paths``), schemas from its pydantic models and envelope rules
(``_openapi_schemas``). A new kind appears here by being registered.

The document is built once per registry (the same kind declarations under the same names)
and served as the cached bytes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import orjson

import plinth
from plinth.kinds.base import KindSpec
from plinth.server import runtime_reports
from plinth.server._openapi_paths import KindPaths, error_responses, headers, parameters, system_paths
from plinth.server._openapi_schemas import KindSchemas, error_codes

BEARER = "bearer"
_CACHE_SIZE = 8
_cache: dict[tuple[tuple[str, int], ...], tuple[tuple[KindSpec, ...], bytes]] = {}
_lock = threading.Lock()

DESCRIPTION = (
    "A self-hosted control service speaking the Control Plane API wire format. Every item has the "
    "envelope id, kind, version, name, description, tags, created, lastModified, links, spec, status; "
    "the server owns id, version, created, lastModified, links and status (they may be sent back and "
    "are ignored). Collections page through the 'next' link. Errors are {status, message, code, details, id}."
)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in _refs(value)]
    return []


def _prune(doc: dict[str, Any]) -> None:
    """Drop the schemas nothing reaches (the org's query shapes, unused patch shapes)."""
    schemas = doc["components"]["schemas"]
    prefix = "#/components/schemas/"
    roots = {k: v for k, v in doc["components"].items() if k != "schemas"}
    todo = [r.removeprefix(prefix) for r in _refs([doc["paths"], roots]) if r.startswith(prefix)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += [r.removeprefix(prefix) for r in _refs(schemas[name]) if r.startswith(prefix)]
    doc["components"]["schemas"] = {k: v for k, v in schemas.items() if k in seen}


def build_document(kinds: Mapping[str, KindSpec]) -> dict[str, Any]:
    """The document as a dict; raises ``ValueError`` if two schemas would share a name."""
    codes = error_codes()
    statuses = frozenset(codes)
    paths = system_paths() | runtime_reports.openapi_paths()
    schemas = KindSchemas(kinds)
    for kind in kinds.values():
        for path, item in KindPaths(kind, statuses, schemas).paths().items():
            if path in paths:
                raise ValueError(f"two kinds claim the path {path}")
            paths[path] = item
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Plinth API", "version": plinth.__version__, "description": DESCRIPTION},
        "security": [{BEARER: []}],
        "tags": [
            {"name": k.presentation.title, "description": f"The {k.name} kind ({k.scope} scope)"}
            for k in kinds.values()
        ]
        + [{"name": "system", "description": "Open endpoints: no credentials needed"}]
        + [{"name": "runtime", "description": "Plinth's extension: what the runtime controller reports"}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                BEARER: {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "Authorization: Bearer <key> (the word in any case, or the bare key).",
                }
            },
            "schemas": schemas.components(),
            "parameters": parameters(),
            "headers": headers(),
            "responses": error_responses(codes),
        },
    }
    _prune(doc)
    return doc


def openapi_document(kinds: Mapping[str, KindSpec]) -> bytes:
    """The document's JSON bytes, computed once per set of kind declarations.

    The cache key is the names and identities of the declarations, so a registry that gains
    a kind gets a new document; the cached entry holds the declarations, so an identity is
    never reused while its entry lives.
    """
    key = tuple((name, id(spec)) for name, spec in kinds.items())
    hit = _cache.get(key)
    if hit is not None:
        return hit[1]
    doc = orjson.dumps(build_document(kinds))
    with _lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.clear()
        _cache[key] = (tuple(kinds.values()), doc)
    return doc
