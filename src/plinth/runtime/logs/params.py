"""The parameters of Loki's ``query_range`` and ``tail`` (Loki's HTTP API documentation), as the
official CLI sends them (``commands/logs.js`` of ``@controlplane/cli`` 3.10.1: ``query``,
``limit``, ``direction``, ``start``, ``end`` in nanoseconds, ``delay_for``).

- ``query``: LogQL (:mod:`~plinth.runtime.logs.logql`); required.
- ``limit``: lines answered at most, default 30 (Loki's default for ``query_range``; 100 for
  ``tail``'s first batch), at most :data:`MAX_LIMIT` (Loki's default
  ``max_entries_limit_per_query``).
- ``direction``: ``forward`` or ``backward`` (the default), any case.
- ``start`` / ``end``: as Loki reads them: an integer of more than 10 digits is nanoseconds, of
  at most 10 seconds; a number with a fraction is seconds; else RFC 3339 (with up to
  nanoseconds). Defaults: ``end`` now, ``start`` an hour before ``end``. Lines answered have
  ``start <= time < end``; ``end`` before ``start`` is refused. A tail has no end (an ``end``
  given is ignored, as Loki's tail ignores it).
- ``delay_for``: accepted and ignored (the platform's tail delays nothing here); at most 5
  (Loki's bound) when given.
- Anything else (``step``, ``interval``, ...) is ignored, as Loki ignores what log queries do
  not use.

A bad value is a :class:`ParamError` naming the parameter, which the service answers as a 400.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from plinth.errors import FieldError, ValidationFailed
from plinth.runtime.logs.logql import LogQuery, QueryError, parse
from plinth.runtime.logs.records import parse_time

DEFAULT_LIMIT = 30
DEFAULT_TAIL_LIMIT = 100
MAX_LIMIT = 5000
MAX_DELAY_FOR = 5
HOUR_NS = 3600 * 1_000_000_000
#: The end of time (the largest time SQLite's integers hold), a tail's end.
FOREVER = 2**63 - 1


class ParamError(ValueError):
    """A bad parameter; :attr:`status` and :meth:`body` are the 400 to answer."""

    status = 400

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name, self.message = name, message

    def body(self) -> dict[str, object]:
        """Plinth's error shape (docs/api.md), the parameter named as the field's path."""
        body = ValidationFailed([FieldError(self.name, self.message)]).body("")
        body.pop("id", None)
        return body


@dataclass(frozen=True, slots=True)
class LogParams:
    query: LogQuery
    limit: int
    backward: bool
    start: int
    end: int


def parse_instant(name: str, text: str) -> int:
    """A time parameter as nanoseconds since the epoch (the module docstring's forms)."""
    value = text.strip()
    try:
        if "." in value and value.replace(".", "", 1).lstrip("-").isdigit():
            whole, _, fraction = value.partition(".")
            return int(whole) * 1_000_000_000 + int((fraction + "000000000")[:9])
        if value.lstrip("-").isdigit():
            number = int(value)
            return number * 1_000_000_000 if len(value.lstrip("-")) <= 10 else number
        return parse_time(value)
    except ValueError:
        pass
    raise ParamError(name, f"{text!r} is not a time (nanoseconds or seconds since the epoch, or RFC 3339)")


def _int(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    text = params.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise ParamError(name, f"{text!r} is not an integer") from None
    if not low <= value <= high:
        raise ParamError(name, f"must be between {low} and {high} (was {value})")
    return value


def parse_params(params: Mapping[str, str], tail: bool = False, now_ns: int | None = None) -> LogParams:
    """The parameters of one request, checked; :class:`ParamError` naming the first bad one."""
    text = params.get("query")
    if not text:
        raise ParamError("query", 'a LogQL query is required, such as {workload="web"}')
    try:
        query = parse(text)
    except QueryError as exc:
        raise ParamError("query", str(exc)) from None
    limit = _int(params, "limit", DEFAULT_TAIL_LIMIT if tail else DEFAULT_LIMIT, 1, MAX_LIMIT)
    direction = (params.get("direction") or "backward").lower()
    if direction not in ("forward", "backward"):
        raise ParamError("direction", f"must be forward or backward (was {params['direction']!r})")
    _int(params, "delay_for", 0, 0, MAX_DELAY_FOR)
    now = time.time_ns() if now_ns is None else now_ns
    if tail:  # a tail has no end (Loki's ignores one): it starts at ``start`` and goes on
        start = parse_instant("start", params["start"]) if params.get("start") else now - HOUR_NS
        return LogParams(query, limit, direction == "backward", start, FOREVER)
    end = parse_instant("end", params["end"]) if params.get("end") else now
    start = parse_instant("start", params["start"]) if params.get("start") else end - HOUR_NS
    if end < start:
        raise ParamError("end", "must not be before start")
    return LogParams(query, limit, direction == "backward", start, end)
