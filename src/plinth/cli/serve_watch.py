"""The ``plinth serve`` options of watches (docs/watch.md), each a :class:`Settings` field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from plinth.server import settings as s

_OPTIONS = (
    click.option(
        "--watch-bookmark-interval",
        "watch_bookmark_s",
        envvar="PLINTH_WATCH_BOOKMARK_S",
        type=click.FloatRange(min=0.05),
        default=s.WATCH_BOOKMARK_S,
        show_default=True,
        help="Seconds between a watch's BOOKMARK events (keeps idle streams alive through proxies)",
    ),
    click.option(
        "--watch-limit",
        "watch_limit",
        envvar="PLINTH_WATCH_LIMIT",
        type=click.IntRange(min=1),
        default=s.WATCH_LIMIT,
        show_default=True,
        help="Open watches per principal, per process (429 past it)",
    ),
    click.option(
        "--watch-buffer",
        "watch_buffer_bytes",
        envvar="PLINTH_WATCH_BUFFER_BYTES",
        type=click.IntRange(min=1024),
        default=s.WATCH_BUFFER_BYTES,
        show_default=True,
        help="Bytes a watch may fall behind its changes before it ends with an ERROR event",
    ),
    click.option(
        "--watch-retention-count",
        "watch_retention_count",
        envvar="PLINTH_WATCH_RETENTION_COUNT",
        type=click.IntRange(min=1),
        default=s.WATCH_RETENTION_COUNT,
        show_default=True,
        help="Changes the change log keeps for watches to resume from (410 for older versions)",
    ),
    click.option(
        "--watch-retention-age",
        "watch_retention_age_s",
        envvar="PLINTH_WATCH_RETENTION_AGE_S",
        type=click.FloatRange(min=0),
        default=s.WATCH_RETENTION_AGE_S,
        show_default=True,
        help="Seconds the change log keeps a change for watches to resume from",
    ),
    click.option(
        "--watch-trim-interval",
        "watch_trim_s",
        envvar="PLINTH_WATCH_TRIM_S",
        type=click.FloatRange(min=0.05),
        default=s.WATCH_TRIM_S,
        show_default=True,
        help="Seconds between trims of the change log to its retention",
    ),
)


def watch_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the watch options; the command receives them as keyword arguments named as the
    :class:`Settings` fields."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command
