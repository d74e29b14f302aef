"""The base every spec model builds on, and the small shape helpers the kinds share.

Spec models are *strict*: a JSON API has no excuse for ``"10"`` where a number belongs or
``1`` where a boolean belongs, and coercing them would store something the client did not
send. Integers are still accepted where a float is expected (``2`` is a fine factor), and
unknown fields are rejected so that a typo is an error, not a silently dropped setting.

Fields are ``int`` where clients use integers and ``float`` where they use fractions, never
an ``int | float`` union: union branches would leak into error paths (``sampling.int``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, ClassVar, Self

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

#: A TCP/UDP port number.
Port = Annotated[int, Field(ge=1, le=65535)]

#: A non-empty string (an empty host or credentials link is never meaningful).
NonEmptyStr = Annotated[str, Field(min_length=1)]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _check_email(value: str) -> str:
    if not _EMAIL.fullmatch(value):
        raise ValueError("must be an email address (name@domain.tld)")
    return value


#: An email address, checked for shape only (``name@domain.tld``).
Email = Annotated[str, AfterValidator(_check_email)]


def matching(pattern: str, message: str) -> AfterValidator:
    """A validator that refuses a string ``pattern`` does not match whole, with ``message``."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(message)
        return value

    return AfterValidator(check)


def _bool_text(value: object) -> object:
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


#: A boolean that also takes the strings ``"true"`` and ``"false"``, stored as the boolean. Only
#: where a published client is known to send the string and the live API to accept it (the
#: strict rule above holds everywhere else): see docs/validation-audit.md.
BoolText = Annotated[bool, BeforeValidator(_bool_text)]


class SpecModel(BaseModel):
    """Strict, closed pydantic model: unknown fields and type coercion are both errors."""

    model_config = ConfigDict(extra="forbid", strict=True)


def set_fields(model: BaseModel, names: Iterable[str]) -> list[str]:
    """The names among ``names`` whose value on ``model`` is not ``None``, in order."""
    return [name for name in names if getattr(model, name) is not None]


def exactly_one(model: BaseModel, names: tuple[str, ...], what: str) -> None:
    """Raise ``ValueError`` unless exactly one of ``names`` is set on ``model``.

    Used by "one of these shapes" objects (a logging provider, a tracing provider, a query
    term's subject). The error lands on the object itself, whose path names it.
    """
    chosen = set_fields(model, names)
    if len(chosen) != 1:
        found = f" (found {', '.join(chosen)})" if chosen else ""
        raise ValueError(f"must set exactly one {what}: {', '.join(names)}{found}")


class OneOfModel(SpecModel):
    """A "one of these shapes" object: exactly one of the fields ``ONE_OF`` names is set
    (:func:`exactly_one`; the error lands on the object). ``ONE_OF_WHAT`` says what they are."""

    ONE_OF: ClassVar[tuple[str, ...]] = ()
    ONE_OF_WHAT: ClassVar[str] = ""

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        exactly_one(self, self.ONE_OF, self.ONE_OF_WHAT)
        return self


class TopLevelModel(BaseModel):
    """Strict model of a kind's extra top-level fields (``KindSpec.schema.top_level_model``).

    Unknown keys are *ignored* here, not rejected: the engine reports every top-level key
    that is neither envelope nor a field of this model as an unknown field itself, before
    validating the rest with this model, so forbidding them here would report them twice.
    Nested objects use :class:`SpecModel` and stay closed.
    """

    model_config = ConfigDict(extra="ignore", strict=True)
