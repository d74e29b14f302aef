"""The engines' log files, record by record: podman's ``k8s-file`` and docker's ``json-file``.

Each engine writes a container's output to one file, a record a line:

- **podman** (``k8s-file``, the CRI log format of Kubernetes): ``<RFC 3339 time with
  nanoseconds> <stdout|stderr> <P|F> <text>``. ``P`` marks a partial record: the container wrote
  a line longer than the engine's buffer, or no newline yet, and the text goes on in the next
  records of the same stream up to one marked ``F``.
- **docker** (``json-file``): ``{"log": "<text>\\n", "stream": "stdout", "time": "<RFC 3339>"}``;
  a ``log`` without its final newline is partial in the same way.

:func:`parse` turns the bytes read from a file into :class:`Record` lines (partials joined,
the time of a joined line that of its first part) and says how many bytes it *consumed*: up to
the end of the last complete line. A partial line, or a half-written record at the end, is left
for the next read, so a reader that keeps the offset it consumed (as the collector does across
restarts) neither loses nor repeats a line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

#: The longest line kept (bytes of UTF-8): a longer one is cut, so one runaway line cannot fill a
#: workload's whole retention (Loki's default ``max_line_size`` is 256 KB, cut or refused).
MAX_LINE = 256 * 1024
#: A read of this many bytes that holds no complete line takes its partial lines as they are
#: (cut to :data:`MAX_LINE`): a reader reads at least this much at a time, so it never waits
#: forever on a line that does not end.
FLUSH_AT = 4 * MAX_LINE


@dataclass(frozen=True, slots=True)
class Record:
    """One line a container wrote: its time (nanoseconds since the epoch, the engine's), its
    stream (``stdout`` or ``stderr``) and its text (no final newline)."""

    ts: int
    stream: str
    line: str


def parse_time(text: str) -> int:
    """An RFC 3339 time with up to nanoseconds (``2026-11-27T10:11:12.123456789+01:00`` or
    ``...Z``) as nanoseconds since the epoch; ``ValueError`` when it is not one."""
    head, dot, rest = text.partition(".")
    digits = ""
    zone = "Z"
    if dot:
        i = 0
        while i < len(rest) and rest[i].isdigit():
            i += 1
        digits, zone = rest[:i], rest[i:] or "Z"
    elif len(head) > 19:
        head, zone = head[:19], head[19:]
    if zone in ("Z", "z"):
        zone = "+00:00"
    seconds = datetime.fromisoformat(head + zone).timestamp()
    return int(seconds) * 1_000_000_000 + int((digits + "000000000")[:9] or 0)


def _cri(raw: bytes) -> tuple[int, str, bool, bytes] | None:
    parts = raw.split(b" ", 3)
    if len(parts) < 3 or parts[1] not in (b"stdout", b"stderr") or parts[2] not in (b"P", b"F"):
        return None
    return (
        parse_time(parts[0].decode("ascii")),
        parts[1].decode(),
        parts[2] == b"P",
        parts[3] if len(parts) > 3 else b"",
    )


def _docker(raw: bytes) -> tuple[int, str, bool, bytes] | None:
    doc = json.loads(raw)
    text = str(doc.get("log", "")).encode()
    partial = not text.endswith(b"\n")
    return parse_time(str(doc["time"])), str(doc.get("stream", "stdout")), partial, text.removesuffix(b"\n")


def _decode(parts: list[bytes]) -> str:
    return b"".join(parts)[:MAX_LINE].decode("utf-8", "replace")


def parse(data: bytes) -> tuple[list[Record], int]:
    """The complete lines in ``data`` (read from a log file at a record boundary) and how many
    bytes of it they take; a record that is not one of the two formats is skipped.

    Consumed bytes end where no stream has a partial line waiting: a line completed while
    another stream's is still partial is held back (and parsed again by the next read), so the
    offset kept is always one every line before it was taken from."""
    records: list[Record] = []
    held: list[Record] = []  # complete, but after the start of a line still partial
    pending: dict[str, tuple[int, list[bytes]]] = {}  # stream -> (time of its first part, parts)
    consumed = pos = 0
    while (end := data.find(b"\n", pos)) != -1:
        raw, pos = data[pos:end], end + 1
        try:
            parsed = _docker(raw) if raw.startswith(b"{") else _cri(raw)
        except (ValueError, KeyError, TypeError):
            parsed = None
        if parsed is not None:
            ts, stream, partial, text = parsed
            first, parts = pending.pop(stream, (ts, []))
            parts.append(text)
            if partial:
                pending[stream] = (first, parts)
            else:
                held.append(Record(first, stream, _decode(parts)))
        if not pending:
            records += held
            held.clear()
            consumed = pos
    if pending and consumed == 0 and len(data) >= FLUSH_AT:
        # A partial line longer than anything kept: take what there is rather than wait forever.
        records += held
        records += [Record(first, stream, _decode(parts)) for stream, (first, parts) in pending.items()]
        consumed = pos
    return records, consumed
