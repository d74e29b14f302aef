"""The Query object a spec may embed (docs.controlplane.com/core/query), e.g. a GVC's ``staticPlacement.locationQuery``.

Only its shape is checked here; what a query selects is the engine's business. A term
names exactly one subject (``property``, ``rel`` or ``tag``); ``exists``/``!exists`` take
no value. ``kind`` is kept as a free string because clients are known to send odd values
there (docs.controlplane.com/core/query); an embedding kind may narrow it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from plinth.kinds.spec_model import NonEmptyStr, SpecModel, exactly_one
from plinth.meta import QUERY_PATTERN_MAX, QUERY_TERMS_MAX

Operator = Literal["=", "!=", ">", ">=", "<", "<=", "~", "=~", "contains", "exists", "!exists"]


class Term(SpecModel):
    op: Operator | None = None
    property: NonEmptyStr | None = None
    rel: NonEmptyStr | None = None
    tag: NonEmptyStr | None = None
    #: A scalar; typed ``Any`` and checked below, so a bad value is one error, not one per type.
    value: Any = None

    @field_validator("value")
    @classmethod
    def _scalar(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, str | int | float | bool):
            raise ValueError("must be a string, number or boolean")
        return value

    @model_validator(mode="after")
    def _one_subject(self) -> Term:
        exactly_one(self, ("property", "rel", "tag"), "term subject")
        if self.op in ("exists", "!exists") and self.value is not None:
            raise ValueError(f"operator '{self.op}' takes no value")
        if self.op in ("~", "=~") and len(str(self.value)) > QUERY_PATTERN_MAX:
            # The rest of the pattern's syntax is judged where the query runs (the engine's
            # ``querywire``); a pattern it refuses matches nothing there.
            raise ValueError(f"a regular expression may have at most {QUERY_PATTERN_MAX} characters")
        return self


class Sort(SpecModel):
    by: NonEmptyStr
    order: Literal["asc", "desc"] | None = None


class QuerySpec(SpecModel):
    match: Literal["all", "any", "none"] | None = None
    terms: Annotated[list[Term], Field(max_length=QUERY_TERMS_MAX)] | None = None
    sort: Sort | None = None


class Query(SpecModel):
    kind: str | None = None
    context: dict[str, Any] | None = None
    fetch: Literal["items", "links"] | None = None
    spec: QuerySpec | None = None
