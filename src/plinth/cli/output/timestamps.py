"""The CREATED column's renderings for ``--ts iso|local|age`` (docs/cli.md, Output formats: ``--ts``).

``age`` follows the npm ``humanize-duration`` package as the official CLI calls it: the
duration is floored to whole minutes, then only the largest unit is shown, floored. Its
month is 30.4375 days and its year 365.25 days, so 30 days read "4 weeks".
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from plinth.cli.output.base import RenderContext
from plinth.client.jsvalues import js_string

_UNITS = (
    ("year", 31_557_600_000),
    ("month", 2_629_800_000),
    ("week", 604_800_000),
    ("day", 86_400_000),
    ("hour", 3_600_000),
    ("minute", 60_000),
)


def parse_js_date(value: Any) -> datetime | None:
    """What ``new Date(value)`` understands, for the values an API returns; ``None`` if invalid."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=value)
        except OverflowError:
            return None
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        if len(text) == 10:  # a bare date is midnight UTC in JavaScript
            return datetime.fromisoformat(text).replace(tzinfo=UTC)
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.astimezone()  # JavaScript reads a date-time without offset as local time
    return parsed.astimezone(UTC)


def iso(moment: datetime) -> str:
    """``Date.prototype.toISOString``: UTC, always with milliseconds."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def age(moment: datetime, now: datetime) -> str:
    elapsed_ms = (now - moment) // timedelta(milliseconds=1)
    floored = abs((elapsed_ms // 60_000) * 60_000)
    for unit, size in _UNITS:
        count = floored // size
        if count >= 1:
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "Now"


def local(moment: datetime, tz: str | None, locale: str) -> str:
    """``Date.prototype.toLocaleString()`` for en-US (also C and POSIX) and the dotted European locales."""
    zone = _zone(tz)
    when = moment.astimezone(zone) if zone is not None else moment.astimezone()
    if locale.split("-")[0] in ("de", "fr", "ru", "pl", "nl", "fi", "no", "nb", "cs", "da"):
        if locale.startswith(("fr", "nl")):
            return f"{when.day:02d}/{when.month:02d}/{when.year} {when:%H:%M:%S}"
        return f"{when.day}.{when.month}.{when.year}, {when:%H:%M:%S}"
    hour = when.hour % 12 or 12
    suffix = "AM" if when.hour < 12 else "PM"
    return f"{when.month}/{when.day}/{when.year}, {hour}:{when:%M:%S} {suffix}"


def _zone(tz: str | None) -> Any:
    if not tz:
        return None
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(tz.lstrip(":"))
    except (ValueError, KeyError, OSError):
        return UTC if tz.upper() in ("UTC", "GMT") else None


def render(value: Any, ctx: RenderContext) -> str:
    """The cell for a timestamp field; values that do not parse are shown as they are."""
    if not value:
        return ""
    moment = parse_js_date(value)
    if moment is None:
        return js_string(value)
    if ctx.ts == "age":
        return age(moment, ctx.now)
    if ctx.ts == "local":
        return local(moment, ctx.tz, ctx.locale)
    return iso(moment)


def locale_from_environ(environ: Any) -> str:
    """The BCP 47 tag Node would pick from ``LC_ALL`` / ``LC_MESSAGES`` / ``LANG`` (``C`` means en-US)."""
    raw = environ.get("LC_ALL") or environ.get("LANG") or "en_US"
    base = raw.split(".")[0].split("@")[0]
    if base in ("C", "POSIX", ""):
        return "en-US"
    return base.replace("_", "-")
