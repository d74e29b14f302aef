"""Cron schedules, in two dialects: volume set snapshots and Kubernetes CronJobs.

Both read ``minute hour day-of-month month day-of-week``; each field takes ``*``, ``N``,
``N-M``, ``*/S``, ``N-M/S`` and comma lists of these, with month and weekday names
(``jan``, ``mon``) in any case.

- **Snapshot schedules** (:func:`schedule_problem`, docs.controlplane.com/reference/volumeset) fire at most once an
  hour: the minute field must be one number (0-59). Weekday 7 is Sunday, as in most crons. Macros
  such as ``@hourly`` are not accepted: the platform documents 5 fields.
- **Kubernetes schedules** (:func:`kubernetes_schedule_problem`, a cron workload's
  ``job.schedule``, types-ts cronjob.ts) accept what a Kubernetes CronJob accepts, which is what
  its validation's parser (robfig/cron ``ParseStandard``) accepts: every field in the full
  syntax above, ``?`` as a synonym of ``*``, ``N/S`` meaning ``N-<max>/S``, weekdays 0-6
  (that parser has no weekday 7), the macros ``@yearly``, ``@annually``, ``@monthly``,
  ``@weekly``, ``@daily``, ``@midnight``, ``@hourly`` and ``@every <duration>`` (a Go
  duration such as ``90s`` or ``1h30m``). Kubernetes refuses ``TZ=``/``CRON_TZ=`` in the
  schedule (its ``timeZone`` field replaces them), and so does this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def _is_number(text: str) -> bool:
    # str.isdigit alone accepts characters such as "²" that int() rejects.
    return text.isascii() and text.isdigit()


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


@dataclass(frozen=True, slots=True)
class _Field:
    label: str
    low: int
    high: int
    names: tuple[str, ...] = ()

    def value(self, text: str) -> int | None:
        """The number ``text`` stands for, or ``None`` if it is not one of this field's values."""
        lowered = text.lower()
        if lowered in self.names:
            # Month names count from 1 (jan), weekday names from 0 (sun), like the field's range.
            return self.names.index(lowered) + self.low
        if _is_number(text) and self.low <= int(text) <= self.high:
            return int(text)
        return None


_MINUTE = _Field("minute", 0, 59)
_HOUR = _Field("hour", 0, 23)
_DAY_OF_MONTH = _Field("day-of-month", 1, 31)
_MONTH = _Field("month", 1, 12, _MONTHS)
_DAY_OF_WEEK = _Field("day-of-week", 0, 7, _WEEKDAYS)
#: robfig/cron bounds the weekday to 0-6.
_KUBERNETES_DAY_OF_WEEK = _Field("day-of-week", 0, 6, _WEEKDAYS)

_KUBERNETES_FIELDS = (_MINUTE, _HOUR, _DAY_OF_MONTH, _MONTH, _KUBERNETES_DAY_OF_WEEK)
KUBERNETES_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
#: A positive Go duration (``time.ParseDuration`` without a sign): one or more number+unit pairs.
_GO_DURATION = re.compile(r"(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+")


def _item_problem(item: str, field: _Field, kubernetes: bool = False) -> str | None:
    base, has_step, step = item.partition("/")
    if has_step and not (_is_number(step) and int(step) > 0):
        return f"'{item}': the step must be a positive number"
    if base == "*" or (kubernetes and base == "?"):
        return None
    low_text, is_range, high_text = base.partition("-")
    low = field.value(low_text)
    high = field.value(high_text) if is_range else low
    if low is None or high is None:
        return f"'{item}' is not a value or range within {field.low}-{field.high}"
    if low > high:
        return f"'{item}': a range must run from low to high"
    # Kubernetes reads "N/S" as "N-<max>/S"; snapshot schedules want '*' or a range first.
    if has_step and not is_range and not kubernetes:
        return f"'{item}': a step needs '*' or a range before it"
    return None


def _fields_problem(fields: list[str], layout: tuple[_Field, ...], kubernetes: bool) -> str | None:
    for text, field in zip(fields, layout, strict=True):
        for item in text.split(","):
            problem = _item_problem(item, field, kubernetes)
            if problem:
                return f"{field.label} field: {problem}"
    return None


def schedule_problem(expression: str) -> str | None:
    """What is wrong with ``expression`` as a snapshot schedule, or ``None`` if it is fine."""
    fields = expression.split()
    if len(fields) != 5:
        return "must be a cron expression of 5 fields: minute hour day-of-month month day-of-week"
    minute = fields[0]
    if not (_is_number(minute) and int(minute) <= 59):
        return "the minute field must be a single number 0-59 (snapshots run at most once an hour)"
    return _fields_problem(fields[1:], (_HOUR, _DAY_OF_MONTH, _MONTH, _DAY_OF_WEEK), kubernetes=False)


def _macro_problem(expression: str) -> str | None:
    if expression in KUBERNETES_MACROS:
        return None
    every, has_every, duration = expression.partition(" ")
    if every == "@every" and has_every:
        if _GO_DURATION.fullmatch(duration.strip()):
            return None
        return f"'@every' needs a positive duration such as 90s, 5m or 1h30m, not '{duration.strip()}'"
    return f"unknown macro '{expression}': use one of {', '.join(KUBERNETES_MACROS)} or '@every <duration>'"


def kubernetes_schedule_problem(expression: str) -> str | None:
    """What is wrong with ``expression`` as a Kubernetes CronJob schedule, or ``None``."""
    if not expression.strip():
        return "must not be empty"
    if "TZ" in expression:
        # Kubernetes' own check: any "TZ" means a TZ=/CRON_TZ= prefix, which it refuses.
        return "must not set a time zone (TZ= or CRON_TZ= are not supported in the schedule)"
    if expression.startswith("@"):
        return _macro_problem(expression)
    fields = expression.split()
    if len(fields) != 5:
        return "must be a cron expression of 5 fields (minute hour day-of-month month day-of-week) or a macro"
    return _fields_problem(fields, _KUBERNETES_FIELDS, kubernetes=True)


def check_schedule(expression: str) -> str:
    """Pydantic validator: accept ``expression`` unchanged when it is a valid snapshot schedule."""
    problem = schedule_problem(expression)
    if problem:
        raise ValueError(problem)
    return expression


def check_kubernetes_schedule(expression: str) -> str:
    """Pydantic validator: accept ``expression`` unchanged when Kubernetes would accept it."""
    problem = kubernetes_schedule_problem(expression)
    if problem:
        raise ValueError(problem)
    return expression
