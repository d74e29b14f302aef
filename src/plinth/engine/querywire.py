"""The wire query (docs.controlplane.com/core/query) -> a validated :class:`~plinth.storage.query.Filter`.

Accepted: ``{kind?, context?, fetch?: items|links, spec: {match?: all|any|none, terms?: [...],
sort?: {by, order?: asc|desc}}}``. A term is ``{op?, property|rel|tag, value?}`` with ``op``
defaulting to ``=``. Properties are the kind's ``query_properties`` or any dotted path under
``spec.`` or ``status.``; ``rel: gvc`` filters GVC-scoped kinds by their GVC. Every problem is
reported at once, by path (``spec.terms[2].op``).
"""

from __future__ import annotations

import re
from typing import Any

from plinth.errors import FieldError, ValidationFailed
from plinth.kinds.base import KindSpec
from plinth.meta import QUERY_TERMS_MAX
from plinth.storage import regex
from plinth.storage.query import OPS, Filter, Sort, Term, scalar_text

_SEGMENT = re.compile(r"^[A-Za-z0-9_$@-]+$")
_NO_VALUE_OPS = ("exists", "!exists")


def _property_path(kind: KindSpec, prop: Any, path: str, errors: list[FieldError]) -> tuple[str, ...] | None:
    if not isinstance(prop, str) or not prop:
        errors.append(FieldError(path, "must be a non-empty string"))
        return None
    parts = tuple(prop.split("."))
    if prop in kind.presentation.query_properties or (
        parts[0] in ("spec", "status") and len(parts) > 1 and all(_SEGMENT.fullmatch(p) for p in parts)
    ):
        return parts
    errors.append(
        FieldError(
            path,
            f"'{prop}' cannot be queried; use one of {', '.join(kind.presentation.query_properties)} or a spec.* path",
        )
    )
    return None


def _term(kind: KindSpec, raw: Any, path: str, errors: list[FieldError]) -> Term | None:
    if not isinstance(raw, dict):
        errors.append(FieldError(path, "must be an object"))
        return None
    unknown = set(raw) - {"op", "property", "rel", "tag", "value"}
    for key in sorted(unknown):
        errors.append(FieldError(f"{path}.{key}", "unknown field"))
    op = raw.get("op", "=")
    if op not in OPS:
        errors.append(FieldError(f"{path}.op", f"must be one of {', '.join(OPS)}"))
        return None
    selectors = [k for k in ("property", "rel", "tag") if k in raw]
    if len(selectors) != 1:
        errors.append(FieldError(path, "exactly one of property, rel or tag is required"))
        return None
    value = raw.get("value")
    if isinstance(value, dict | list):
        errors.append(FieldError(f"{path}.value", "must be a string, number, boolean or null"))
        return None
    if op not in _NO_VALUE_OPS and "value" not in raw:
        errors.append(FieldError(f"{path}.value", f"is required for op '{op}'"))
        return None
    if op in ("~", "=~"):
        try:
            regex.compile_pattern(scalar_text(value))
        except regex.PatternError as exc:
            errors.append(FieldError(f"{path}.value", str(exc)))
            return None
    selector = selectors[0]
    if selector == "tag":
        if not isinstance(raw["tag"], str) or not raw["tag"]:
            errors.append(FieldError(f"{path}.tag", "must be a non-empty string"))
            return None
        return Term(op, value, tag=raw["tag"])
    if selector == "rel":
        if raw["rel"] != "gvc" or kind.scope != "gvc":
            errors.append(FieldError(f"{path}.rel", f"kind '{kind.name}' has no relation '{raw['rel']}'"))
            return None
        if op not in ("=", "!="):
            errors.append(FieldError(f"{path}.op", "a rel term supports only = and !="))
            return None
        return Term(op, str(value), parent=True)
    prop_path = _property_path(kind, raw["property"], f"{path}.property", errors)
    return None if prop_path is None else Term(op, value, path=prop_path)


def parse_query(kind: KindSpec, body: Any) -> tuple[Filter, dict[str, Any]]:
    """Validate a query body; returns the filter and the normalised query echoed in results."""
    errors: list[FieldError] = []
    if not isinstance(body, dict):
        raise ValidationFailed([FieldError("(body)", "must be an object")], "query")
    for key in sorted(set(body) - {"kind", "context", "fetch", "spec"}):
        errors.append(FieldError(key, "unknown field"))
    if not isinstance(body.get("context", {}), dict | None):
        errors.append(FieldError("context", "must be an object"))
    if body.get("fetch", "items") not in ("items", "links"):
        errors.append(FieldError("fetch", "must be items or links"))
    spec = body.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise ValidationFailed([FieldError("spec", "must be an object")], "query")
    for key in sorted(set(spec) - {"match", "terms", "sort"}):
        errors.append(FieldError(f"spec.{key}", "unknown field"))
    match = spec.get("match", "all")
    if match not in ("all", "any", "none"):
        errors.append(FieldError("spec.match", "must be all, any or none"))
    raw_terms = spec.get("terms")
    if raw_terms is None:
        raw_terms = []
    elif not isinstance(raw_terms, list):
        errors.append(FieldError("spec.terms", "must be an array"))
        raw_terms = []
    elif len(raw_terms) > QUERY_TERMS_MAX:
        # Refused whole: each term is SQL the store compiles, and SQLite bounds an expression's depth.
        errors.append(FieldError("spec.terms", f"must have at most {QUERY_TERMS_MAX} terms, not {len(raw_terms)}"))
        raw_terms = []
    terms = [_term(kind, t, f"spec.terms[{i}]", errors) for i, t in enumerate(raw_terms)]
    sort = None
    raw_sort = spec.get("sort")
    if raw_sort is not None:
        if not isinstance(raw_sort, dict) or "by" not in raw_sort:
            errors.append(FieldError("spec.sort", "must be an object with 'by'"))
        else:
            by = _property_path(kind, raw_sort["by"], "spec.sort.by", errors)
            order = raw_sort.get("order", "asc")
            if order not in ("asc", "desc"):
                errors.append(FieldError("spec.sort.order", "must be asc or desc"))
            if by is not None:
                sort = Sort(by, descending=order == "desc")
    if errors:
        raise ValidationFailed(errors, "query")
    normalised: dict[str, Any] = {
        "kind": kind.name,
        "fetch": body.get("fetch", "items"),
        "spec": {"match": match, "terms": raw_terms},
    }
    if raw_sort is not None:
        normalised["spec"]["sort"] = raw_sort
    return Filter(match, tuple(t for t in terms if t is not None), sort), normalised
