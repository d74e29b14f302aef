"""PATCH-shaped copies of spec schemas: what a deep-merge patch (``engine/patch.py``) may hold.

A patch object is the full object with every field optional; ``null`` removes a field (so
only fields the model does not require may be ``null``); objects and map values merge, so
they are patch-shaped too; arrays replace wholesale, so they keep their full schema. Each
field ``f`` may also be replaced with ``$replace/f`` (full schema), and array fields take
``$append/f`` (elements to add), ``$drop/f`` (values, or names, to remove) and, for arrays
of named objects, ``$patch/f`` (objects merged by ``name``). Map fields take ``$drop/f``
(keys to remove).

The copies are named ``{Model}Partial`` and live beside the full schemas in components.
"""

from __future__ import annotations

import copy
from typing import Any

Schema = dict[str, Any]
PREFIX = "#/components/schemas/"
NULL: Schema = {"type": "null"}


def _is_model(schema: Any) -> bool:
    return isinstance(schema, dict) and isinstance(schema.get("properties"), dict)


def partial_name(name: str) -> str:
    return f"{name}Partial"


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return schema is True
    if schema == {} or schema.get("type") == "null" or "null" in (schema.get("type") or []):
        return True
    return any(_allows_null(s) for s in schema.get("anyOf", []) + schema.get("oneOf", []))


def _without_null(schema: Schema) -> Schema:
    """``X | None`` as pydantic writes it (``anyOf: [X, null]``) -> ``X``."""
    branches = [s for s in schema.get("anyOf", []) if s != NULL]
    if "anyOf" in schema and len(branches) == 1 and set(schema) <= {"anyOf", "default", "title", "description"}:
        return dict(branches[0])
    return schema


class Partials:
    """Builds ``{Model}Partial`` schemas for the models in ``defs`` (the hoisted ``$defs``)."""

    def __init__(self, defs: dict[str, Schema]) -> None:
        self.defs = defs

    def _target(self, ref: str) -> str | None:
        name = ref.removeprefix(PREFIX)
        return name if ref.startswith(PREFIX) and _is_model(self.defs.get(name)) else None

    def _deref(self, schema: Schema) -> Schema:
        name = self._target(schema.get("$ref", ""))
        return self.defs[name] if name else schema

    def of(self, schema: Any) -> Any:
        """The patch shape of a field schema (refs to models point at their partials)."""
        if not isinstance(schema, dict):
            return schema
        out: Schema = {}
        for key, value in schema.items():
            if key == "$ref":
                target = self._target(value)
                out[key] = PREFIX + partial_name(target) if target else value
            elif key in ("anyOf", "oneOf", "allOf"):
                out[key] = [self.of(s) for s in value]
            elif key == "additionalProperties" and isinstance(value, dict) and not schema.get("properties"):
                # A map: each value merges into the stored one, and null removes the key.
                out[key] = {"anyOf": [self.of(value), NULL]}
            elif key not in ("discriminator", "default"):
                out[key] = value
        return out

    def _directives(self, field: str, schema: Schema) -> Schema:
        out: Schema = {f"$replace/{field}": copy.deepcopy(schema)}
        plain = _without_null(schema)
        if plain.get("type") == "array":
            items = plain.get("items", {})
            out[f"$append/{field}"] = copy.deepcopy(plain)
            out[f"$drop/{field}"] = {"type": "array", "description": "Values (or, for objects, names) to remove."}
            if "name" in self._deref(items).get("properties", {}):
                named = {"allOf": [self.of(items), {"required": ["name"]}]}
                out[f"$patch/{field}"] = {"type": "array", "items": named}
        elif plain.get("type") == "object" and not plain.get("properties") and plain.get("additionalProperties"):
            out[f"$drop/{field}"] = {"type": "array", "items": {"type": "string"}, "description": "Keys to remove."}
        return out

    def model(self, name: str) -> Schema:
        """The partial of the model ``name``: nothing required, null removes, directives allowed."""
        full = self.defs[name]
        required = set(full.get("required", []))
        properties: Schema = {}
        for field, schema in full["properties"].items():
            shaped = self.of(schema)
            if field not in required and not _allows_null(shaped):
                shaped = {"anyOf": [shaped, NULL]}
            properties[field] = shaped
        for field, schema in full["properties"].items():
            properties.update(self._directives(field, schema))
        out = {k: v for k, v in full.items() if k not in ("properties", "required", "title", "description")}
        out["title"] = f"{full.get('title', name)} (patch)"
        out["description"] = f"A deep-merge patch of {name}: fields merge, null removes, $-directives edit arrays."
        out["properties"] = properties
        return out

    def all(self) -> dict[str, Schema]:
        """Every model's partial, by component name."""
        return {partial_name(name): self.model(name) for name, schema in self.defs.items() if _is_model(schema)}
