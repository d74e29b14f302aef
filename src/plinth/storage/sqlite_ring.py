"""What each recent commit wrote, shared by the worker processes of one SQLite database.

The change counter's file (``sqlite_cache.py``) carries, after the counter, a ring of
:data:`RING` slots. A commit that knows its keys records them in the slot of the counter value it
took the lock at (``before``), before the counter turns even: a 64-bit hash of each record key it
wrote, or "unknown" (more than :data:`KEYS` keys, an import, a commit that failed). A worker whose
cache was valid at ``S`` and that now sees the counter at ``E`` reads the slots of ``S``, ``S+2``,
… ``E-2``: when every one of them is there, it drops those keys alone instead of its whole cache.

Each slot is stamped with its ``before``; a slot holding another stamp (overwritten by a later
commit, or never written: a commit that died, an older Plinth) makes the reader drop everything,
as does a counter that moved :data:`RING` commits or more past ``S`` while it read (the slots it
read may have been reused). A hash collision only drops one record too many.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from plinth.storage.base import Key

#: Slots: commits a worker may fall behind and still keep its cache.
RING = 64
#: Key hashes per slot; a commit writing more is recorded as "unknown".
KEYS = 32
SLOT_WORDS = 2 + KEYS
#: Words of the file the ring takes (after the counter's one).
WORDS = RING * SLOT_WORDS
UNKNOWN = 2**64 - 1


def key_hash(key: Key) -> int:
    """A hash of ``key`` every process computes alike (``hash()`` is salted per process)."""
    text = "\0".join((key.org, key.kind, key.parent, key.name)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


class Ring:
    """The ring over ``words``, a view of 64-bit words of the counter's file (the counter is
    word 0, the ring follows)."""

    def __init__(self, words: memoryview):
        self._words = words

    def _base(self, before: int) -> int:
        return 1 + (before // 2 % RING) * SLOT_WORDS

    def record(self, before: int, keys: Iterable[Key] | None) -> None:
        """The commit that took the lock at ``before`` wrote ``keys`` (``None``: unknown).
        Called by that commit, holding the lock, before the counter turns even."""
        base = self._base(before)
        words = self._words
        words[base] = UNKNOWN  # not ``before``'s until complete
        hashes = None if keys is None else {key_hash(key) for key in keys}
        if hashes is None or len(hashes) > KEYS:
            words[base + 1] = UNKNOWN
        else:
            for n, value in enumerate(hashes):
                words[base + 2 + n] = value
            words[base + 1] = len(hashes)
        words[base] = before

    def keys_of(self, before: int) -> list[int] | None:
        """The key hashes the commit from ``before`` recorded, or ``None`` when unknown."""
        base = self._base(before)
        words = self._words
        count = words[base + 1]
        if words[base] != before or count == UNKNOWN:
            return None
        return [int(words[base + 2 + n]) for n in range(int(count))]
