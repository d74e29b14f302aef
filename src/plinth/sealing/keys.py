"""Secrets keys: 32-byte AES-256 keys, where an operator keeps them, and how they are named.

- **A key** is 32 random bytes, written as base64 (``openssl rand -base64 32``).
- **Its id** is derived from the key: the first 16 hex digits of SHA-256 over
  ``"plinth-secrets-key-id\\0"`` and the key. The same key has the same id wherever it is kept
  (a key file, ``PLINTH_SECRETS_KEY``), so a store sealed under one source opens under the other,
  and an id says nothing about its key.
- **A key file** holds one key a line; blank lines and lines starting with ``#`` are ignored.
  The last key seals; every key decrypts. Rotation appends a key (``plinth secrets
  rotate-key``); an old key may be removed once nothing is sealed with it (``plinth secrets
  status``). The file is written with mode 0600 and replaced atomically.

Where the keys come from (:func:`open_keys`): ``--secrets-key-file`` / ``PLINTH_SECRETS_KEY_FILE``
or ``PLINTH_SECRETS_KEY`` (one key, base64), never both. Without either, a SQLite store uses
``secrets.key`` in its data directory, generated on first start; a PostgreSQL store has no
default (every replica must hold the same keys), and the server refuses to start.

Nothing here ever puts a key, or anything derived from one but its id, in a message.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from plinth.files import private_dir

KEY_BYTES = 32
#: The key file of a SQLite store without a configured key source, in its data directory.
DEFAULT_FILE_NAME = "secrets.key"
#: Seconds between looks at a key file for changes (a rotation adds a key to it).
RECHECK_S = 1.0
_ID_PREFIX = b"plinth-secrets-key-id\0"
HEADER = (
    "# Plinth secrets keys: one key a line, base64 of 32 bytes. The last key seals new values;\n"
    "# every key decrypts. Keep this file secret, back it up with the data, and give every\n"
    "# replica the same one. Remove a key only once `plinth secrets status` shows nothing uses it.\n"
)
POSTGRES_NEEDS_A_KEY = (
    "a PostgreSQL store needs a secrets key that every replica shares: give --secrets-key-file "
    "(PLINTH_SECRETS_KEY_FILE) or PLINTH_SECRETS_KEY (base64 of 32 bytes, e.g. `openssl rand -base64 32`)"
)


class KeyConfigError(ValueError):
    """The configured keys cannot be used (missing, unreadable, malformed). Never holds a key."""


@dataclass(frozen=True, slots=True)
class Key:
    kid: str
    material: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class KeyRing:
    """Keys oldest first: the last one seals, every one decrypts."""

    keys: tuple[Key, ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise KeyConfigError("no key")

    @property
    def newest(self) -> Key:
        return self.keys[-1]

    @property
    def kids(self) -> tuple[str, ...]:
        return tuple(k.kid for k in self.keys)

    def find(self, kid: str) -> Key | None:
        return next((k for k in self.keys if k.kid == kid), None)


def key_id(material: bytes) -> str:
    return hashlib.sha256(_ID_PREFIX + material).hexdigest()[:16]


def make_key(material: bytes) -> Key:
    if len(material) != KEY_BYTES:
        raise KeyConfigError(f"a key is {KEY_BYTES} bytes")
    return Key(key_id(material), material)


def parse_key(text: str, where: str) -> Key:
    """One key in base64; ``where`` names its source in the error (never the text)."""
    try:
        material = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise KeyConfigError(f"{where}: not base64 (a key is base64 of {KEY_BYTES} bytes)") from exc
    if len(material) != KEY_BYTES:
        raise KeyConfigError(f"{where}: a key is base64 of {KEY_BYTES} bytes, this one is {len(material)} bytes")
    return make_key(material)


def parse_key_file(text: str, where: str) -> KeyRing:
    keys: list[Key] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key = parse_key(line, f"{where}, line {number}")
        if key.kid not in {k.kid for k in keys}:
            keys.append(key)
    if not keys:
        raise KeyConfigError(f"{where} holds no key")
    return KeyRing(tuple(keys))


def read_key_file(path: Path) -> KeyRing:
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError as exc:
        raise KeyConfigError(f"the secrets key file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyConfigError(f"the secrets key file {path} cannot be read ({type(exc).__name__})") from exc
    return parse_key_file(text, f"the secrets key file {path}")


def generate_key() -> Key:
    return make_key(os.urandom(KEY_BYTES))


def _encode(key: Key) -> str:
    return base64.b64encode(key.material).decode("ascii")


def key_file_text(keys: Iterable[Key]) -> str:
    return HEADER + "".join(_encode(k) + "\n" for k in keys)


def write_key_file(path: Path, keys: Iterable[Key], *, exclusive: bool = False) -> None:
    """Write ``keys`` to ``path`` (mode 0600) in one step: a reader sees the old file or the new one.

    With ``exclusive`` the file must not exist yet; ``FileExistsError`` when another process made
    it first (so concurrent first starts agree on one key)."""
    private_dir(path.parent, tighten_existing=False)  # a key file's directory may be the operator's (/etc/plinth)
    fd, partial = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(key_file_text(keys))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(partial, 0o600)
        if exclusive:
            os.link(partial, path)  # fails if the file exists: never replaces another's key
        else:
            os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


class KeySource(Protocol):
    """Where a server's keys come from. ``ring`` may change over time (a key file gains a key)."""

    where: str

    def ring(self) -> KeyRing: ...

    def reload(self) -> KeyRing:
        """The keys read again now (a key id was not found: it may have just been added)."""
        ...


class StaticKeys:
    """Keys that never change (``PLINTH_SECRETS_KEY``, or given by a test)."""

    def __init__(self, ring: KeyRing, where: str = "PLINTH_SECRETS_KEY") -> None:
        self._ring = ring
        self.where = where

    def ring(self) -> KeyRing:
        return self._ring

    def reload(self) -> KeyRing:
        return self._ring


class FileKeys:
    """A key file, read again when it changes (looked at no more than every ``RECHECK_S``), so a
    running server decrypts with a key added by rotation and seals with it from then on. A file
    that stops parsing keeps the keys last read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = f"the secrets key file {path}"
        self._ring = read_key_file(path)
        self._signature = self._stat()
        self._checked = time.monotonic()

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def ring(self) -> KeyRing:
        now = time.monotonic()
        if now - self._checked >= RECHECK_S:
            self._checked = now
            self._refresh()
        return self._ring

    def reload(self) -> KeyRing:
        self._checked = time.monotonic()
        self._refresh()
        return self._ring

    def _refresh(self) -> None:
        signature = self._stat()
        if signature is None or signature == self._signature:
            return
        try:
            self._ring = read_key_file(self.path)
        except KeyConfigError:
            return
        self._signature = signature


@dataclass(frozen=True)
class OpenedKeys:
    """What :func:`open_keys` found: the source, and a line to tell the operator (a new key)."""

    source: KeySource
    note: str | None = None


def default_key_file(data_dir: Path) -> Path:
    return data_dir / DEFAULT_FILE_NAME


def open_keys(
    key_file: str | Path | None,
    key_text: str | None,
    data_dir: Path,
    postgres: bool,
    *,
    generate: bool,
) -> OpenedKeys | None:
    """The key source a server (or a command working on its store) uses.

    ``key_file`` wins when set; then ``key_text`` (base64 of one key); both at once is an error.
    Without either: a SQLite store's ``secrets.key`` in ``data_dir``, generated (with ``generate``)
    when missing; ``None`` when it is missing and not generated, or on PostgreSQL without
    ``generate`` (a command may not need keys). A server (``generate``) on PostgreSQL without
    keys is a :class:`KeyConfigError`: replicas must share one key, so none is made up.
    """
    if key_file and key_text:
        raise KeyConfigError("give the secrets key either as a file (--secrets-key-file) or as PLINTH_SECRETS_KEY")
    if key_file:
        return OpenedKeys(FileKeys(Path(key_file)))
    if key_text:
        return OpenedKeys(StaticKeys(KeyRing((parse_key(key_text, "PLINTH_SECRETS_KEY"),))))
    if postgres:
        if generate:
            raise KeyConfigError(POSTGRES_NEEDS_A_KEY)
        return None
    path = default_key_file(data_dir)
    if path.exists():
        return OpenedKeys(FileKeys(path))
    if not generate:
        return None
    note = None
    try:
        write_key_file(path, [generate_key()], exclusive=True)
        note = (
            f"Generated a secrets key in {path}: back it up with the data (without it the secrets "
            "in this store cannot be read)"
        )
    except FileExistsError:
        pass  # another process of this server made it first: use theirs
    return OpenedKeys(FileKeys(path), note)
