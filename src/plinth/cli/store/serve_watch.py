"""The ``plinth serve`` options of watches (docs/watch.md), each a :class:`Settings` field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from plinth.server import settings as s

#: flag, Settings field (its environment variable is PLINTH_ + the field in capitals), type,
#: default, help.
_OPTIONS: tuple[tuple[str, str, click.ParamType, float, str], ...] = (
    (
        "--watch-bookmark-interval",
        "watch_bookmark_s",
        click.FloatRange(min=0.05),
        s.WATCH_BOOKMARK_S,
        "Seconds between a watch's BOOKMARK events (keeps idle streams alive through proxies)",
    ),
    (
        "--watch-limit",
        "watch_limit",
        click.IntRange(min=1),
        s.WATCH_LIMIT,
        "Open watches per principal, per process (429 past it)",
    ),
    (
        "--watch-buffer",
        "watch_buffer_bytes",
        click.IntRange(min=1024),
        s.WATCH_BUFFER_BYTES,
        "Bytes a watch may fall behind its changes before it ends with an ERROR event",
    ),
    (
        "--watch-retention-count",
        "watch_retention_count",
        click.IntRange(min=1),
        s.WATCH_RETENTION_COUNT,
        "Changes the change log keeps for watches to resume from (410 for older versions)",
    ),
    (
        "--watch-retention-age",
        "watch_retention_age_s",
        click.FloatRange(min=0),
        s.WATCH_RETENTION_AGE_S,
        "Seconds the change log keeps a change for watches to resume from",
    ),
    (
        "--watch-trim-interval",
        "watch_trim_s",
        click.FloatRange(min=0.05),
        s.WATCH_TRIM_S,
        "Seconds between trims of the change log to its retention",
    ),
)


def watch_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the watch options; the command receives them as keyword arguments named as the
    :class:`Settings` fields."""
    for flag, field, kind, default, text in reversed(_OPTIONS):
        envvar = f"PLINTH_{field.upper()}"
        command = click.option(flag, field, envvar=envvar, type=kind, default=default, show_default=True, help=text)(
            command
        )
    return command
