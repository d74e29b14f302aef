"""Helpers that turn schema and common-metadata checks into :class:`FieldError` lists.

Kinds use these so every 400 has the same shape: one entry per offending field, each named
by its JSON path (``spec.ports[0].routes[2].prefix``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from plinth.errors import FieldError
from plinth.meta import (
    CLIENT_SETTABLE_RESERVED_TAGS,
    DESCRIPTION_MAX,
    RESERVED_TAG_PREFIX,
    TAGS_MAX,
)


def json_path(loc: Iterable[int | str], prefix: str = "") -> str:
    """``("ports", 0, "number")`` with prefix ``spec`` -> ``spec.ports[0].number``."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else str(part)
    return out


def _message(err: Any) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "is required"
    msg = str(err.get("msg", "invalid"))
    # pydantic prefixes custom ValueError messages; the path already says where.
    return msg.removeprefix("Value error, ")


def model_errors(exc: ValidationError, prefix: str = "") -> list[FieldError]:
    """Every error of a pydantic ValidationError as a FieldError, in document order."""
    errors: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for err in exc.errors():
        # Unions report once per branch; tagged or not, the location names the field.
        loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        fe = FieldError(json_path(loc, prefix), _message(err))
        if (fe.path, fe.message) not in seen:
            seen.add((fe.path, fe.message))
            errors.append(fe)
    return errors


def validate_model(model: type[BaseModel], data: Any, prefix: str) -> tuple[dict[str, Any] | None, list[FieldError]]:
    """Validate ``data`` against ``model``; returns the normalised dump or the errors.

    The dump is ``mode="json", by_alias=True, exclude_none=True``: defaults declared on the
    model are filled in, and fields left unset (``None``) stay absent.
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None, [FieldError(prefix or "(body)", "must be an object")]
    try:
        parsed = model.model_validate(data)
    except ValidationError as exc:
        return None, model_errors(exc, prefix)
    return parsed.model_dump(mode="json", by_alias=True, exclude_none=True), []


def check_description(description: Any, path: str = "description") -> list[FieldError]:
    if not isinstance(description, str):
        return [FieldError(path, "must be a string")]
    if len(description) > DESCRIPTION_MAX:
        return [FieldError(path, f"must be at most {DESCRIPTION_MAX} characters")]
    if description != description.strip():
        return [FieldError(path, "must not start or end with whitespace")]
    return []


def check_tags(
    tags: Any, old_tags: dict[str, Any] | None = None, path: str = "tags", allowed: frozenset[str] = frozenset()
) -> list[FieldError]:
    """Tags: a map of at most 50 entries; values are strings, numbers, booleans or null.

    Keys under the reserved ``cpln/`` prefix may not be set by clients, except the ones that
    switch documented behaviour on (``meta.CLIENT_SETTABLE_RESERVED_TAGS``) and ones the item
    already carries unchanged (so a read-modify-write round-trips), and the ``allowed`` ones
    of the item's kind (``KindSpec.schema.reserved_tags``).
    """
    if not isinstance(tags, dict):
        return [FieldError(path, "must be an object")]
    errors: list[FieldError] = []
    if len(tags) > TAGS_MAX:
        errors.append(FieldError(path, f"must have at most {TAGS_MAX} tags"))
    old_tags = old_tags or {}
    for key, value in tags.items():
        if not key or not isinstance(key, str):
            errors.append(FieldError(path, "tag keys must be non-empty strings"))
            continue
        if value is not None and not isinstance(value, str | int | float | bool):
            errors.append(FieldError(f"{path}.{key}", "must be a string, number, boolean or null"))
        if (
            key.startswith(RESERVED_TAG_PREFIX)
            and key not in CLIENT_SETTABLE_RESERVED_TAGS
            and key not in allowed
            and old_tags.get(key, object()) != value
        ):
            errors.append(FieldError(f"{path}.{key}", f"the '{RESERVED_TAG_PREFIX}' prefix is reserved"))
    return errors
