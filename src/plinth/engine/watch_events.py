"""The events a watch sends, as the hub and its watchers hold them (``engine/watch.py``).

An :class:`Event` is one change (its item parsed once, when a watcher needs it); a
:class:`Shared` is one batch of one kind, handed whole to every watcher that takes them all; a
:class:`Signal` is a watcher's own ``BOOKMARK`` or final ``ERROR``. Each keeps the wire forms
made of it (``server/watch_stream.py`` encodes), so 1,000 watchers of one change share one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from plinth.errors import APIError
from plinth.storage.base import Change


class Event:
    """One change as watchers receive it. ``item`` is parsed once, when some watcher needs it;
    ``encoded`` keeps each wire form made of it (by form name)."""

    __slots__ = ("_item", "change", "encoded", "type")

    def __init__(self, change: Change, type_: str | None = None):
        self.change = change
        self.type = type_ or change.type
        self._item: Any = None
        self.encoded: dict[str, bytes] = {}

    @property
    def seq(self) -> int:
        return self.change.seq

    @property
    def item(self) -> dict[str, Any]:
        if self._item is None:
            self._item = orjson.loads(self.change.doc)
        return self._item

    def as_type(self, type_: str) -> Event:
        """The same change delivered as another type (a query watch's ``DELETED``)."""
        if type_ == self.type:
            return self
        other = Event(self.change, type_)
        other._item = self._item
        return other


@dataclass(frozen=True, slots=True)
class Signal:
    """A per-watcher event: a ``BOOKMARK`` (with ``initial_end`` after the initial items) or the
    final ``ERROR``."""

    type: str
    seq: int = 0
    error: APIError | None = None
    initial_end: bool = False


class Shared:
    """The changes of one batch for one kind, handed as one entry to every watcher that takes
    them all (it sees every item and has no query): its encodings are made once for them all."""

    __slots__ = ("encoded", "events", "seq", "size")

    def __init__(self, events: list[Event]):
        self.events = events
        self.seq = events[-1].seq
        self.size = sum(len(e.change.doc) + 96 for e in events)
        self.encoded: dict[str, bytes] = {}


#: What a watcher's queue holds.
Entry = Event | Signal | Shared
