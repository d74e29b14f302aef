"""The log files of a failed test's servers and gateways, added to its report.

A test that runs a server (``ServerProcess``) or a gateway (``Caddy``) has their output in files
that are gone by the time a full run's failure is looked at. ``tests/conftest.py`` adds the tail
of each to the report of a failed test, so a rare failure can be read from the run's own output.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

#: Characters of each log kept in a report.
TAIL_CHARS = 6000


def log_paths(funcargs: Mapping[str, Any]) -> Iterator[tuple[str, Path]]:
    """``(fixture name, log file)`` for every fixture value (or member of a tuple value) with a
    ``log_path``."""
    for name, value in funcargs.items():
        for member in value if isinstance(value, tuple) else (value,):
            path = getattr(member, "log_path", None)
            if isinstance(path, Path):
                yield name, path


def log_tails(funcargs: Mapping[str, Any], chars: int = TAIL_CHARS) -> Iterator[tuple[str, str]]:
    """``(section title, the log's last characters)`` for each log of :func:`log_paths`."""
    for name, path in log_paths(funcargs):
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            text = f"(unreadable: {exc})"
        yield f"log of {name} ({path})", text[-chars:]
