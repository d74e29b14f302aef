"""Snapshot schedules: a standard 5-field cron expression that fires at most once an hour.

``minute hour day-of-month month day-of-week``. The minute field must be one number
(0-59), which is what "at most once an hour" means (api.md §2.4); the other fields take the
usual forms: ``*``, ``N``, ``N-M``, ``*/S``, ``N-M/S`` and comma lists of these, with month
and weekday names (``jan``, ``mon``) in any case. Weekday 7 is Sunday, as in most crons.
Macros such as ``@hourly`` are not accepted: the platform documents 5 fields.
"""

from __future__ import annotations

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


_HOUR = _Field("hour", 0, 23)
_DAY_OF_MONTH = _Field("day-of-month", 1, 31)
_MONTH = _Field("month", 1, 12, _MONTHS)
_DAY_OF_WEEK = _Field("day-of-week", 0, 7, _WEEKDAYS)


def _item_problem(item: str, field: _Field) -> str | None:
    base, has_step, step = item.partition("/")
    if has_step and not (_is_number(step) and int(step) > 0):
        return f"'{item}': the step must be a positive number"
    if base == "*":
        return None
    low_text, is_range, high_text = base.partition("-")
    low = field.value(low_text)
    high = field.value(high_text) if is_range else low
    if low is None or high is None:
        return f"'{item}' is not a value or range within {field.low}-{field.high}"
    if low > high:
        return f"'{item}': a range must run from low to high"
    if has_step and not is_range:
        return f"'{item}': a step needs '*' or a range before it"
    return None


def schedule_problem(expression: str) -> str | None:
    """What is wrong with ``expression`` as a snapshot schedule, or ``None`` if it is fine."""
    fields = expression.split()
    if len(fields) != 5:
        return "must be a cron expression of 5 fields: minute hour day-of-month month day-of-week"
    minute = fields[0]
    if not (_is_number(minute) and int(minute) <= 59):
        return "the minute field must be a single number 0-59 (snapshots run at most once an hour)"
    for text, field in zip(fields[1:], (_HOUR, _DAY_OF_MONTH, _MONTH, _DAY_OF_WEEK), strict=True):
        for item in text.split(","):
            problem = _item_problem(item, field)
            if problem:
                return f"{field.label} field: {problem}"
    return None


def check_schedule(expression: str) -> str:
    """Pydantic validator: accept ``expression`` unchanged when it is a valid schedule."""
    problem = schedule_problem(expression)
    if problem:
        raise ValueError(problem)
    return expression
