"""The byte counts a ``cpln cp`` upload expects back (``writeReceivedBytes``).

The official CLI (3.10.1, ``tar-file-transfer/tar-file-transfer.js`` and ``progress-bar.js``)
adds up the decimal numbers the server sends and counts the upload complete only when the sum
equals, exactly, the size it computed beforehand: 512 bytes of header per entry plus each
regular file's data padded to 512 (``calculateTotalSize``), plus the two zero blocks ending the
archive. The tar it sends may also hold what that size leaves out: extended-header entries (pax
``x``/``g``, GNU ``L``/``K``, for long names). :class:`TarProgress` reads the tar as it streams
by and counts only what the CLI counts, so a finished upload adds up exactly.
"""

from __future__ import annotations

BLOCK = 512
#: Entries that carry metadata for the next entry; the CLI's total has no room for them.
META_TYPES = frozenset({b"x", b"g", b"L", b"K"})


def entry_size(header: bytes) -> int:
    """The size field of a tar header: octal text, or base-256 when its first byte's high bit
    is set (GNU, for sizes of 8 GiB and more)."""
    field = header[124:136]
    if field[0] & 0x80:
        value = field[0] & 0x7F
        for byte in field[1:]:
            value = (value << 8) | byte
        return value
    text = field.split(b"\0", 1)[0].strip()
    return int(text, 8) if text else 0


class TarProgress:
    """Feed it the tar as it arrives; each call answers how many bytes to report for it."""

    def __init__(self) -> None:
        self._header = b""
        self._left = 0
        self._counting = True

    def feed(self, data: bytes) -> int:
        counted = 0
        view = memoryview(data)
        while view:
            if self._left:
                take = min(self._left, len(view))
                self._left -= take
                counted += take if self._counting else 0
                view = view[take:]
                continue
            need = BLOCK - len(self._header)
            self._header += bytes(view[:need])
            view = view[need:]
            if len(self._header) < BLOCK:
                break
            header, self._header = self._header, b""
            if not header.strip(b"\0"):
                counted += BLOCK  # an end-of-archive block
                continue
            try:
                size = entry_size(header)
            except ValueError:
                size = 0  # not a tar header the CLI made; tar itself will refuse it
            self._counting = header[156:157] not in META_TYPES
            counted += BLOCK if self._counting else 0
            self._left = -(-size // BLOCK) * BLOCK
        return counted
