"""The web console's files: plain ES modules, CSS and one HTML page, shipped in the package.

No build step and nothing fetched at run time: ``static/`` holds exactly what the browser gets.
This package knows nothing of Plinth (``.importlinter``: console-alone); ``server/console.py``
serves it at ``/console`` with its security headers, and adds the one generated file
(``kinds.json``, from the kind declarations).

:func:`asset` answers one file by its name under ``static/`` (``""`` is the page itself),
with its content type and a strong ETag (a hash of its bytes), read once per process. Each file
is gzipped once, when it is read (level 9: it costs milliseconds once, and the first load
then transfers about a third of the bytes); :meth:`Asset.pick` chooses the gzip copy for a
browser that accepts it, with an ETag of its own (a strong ETag names one representation).
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

STATIC = Path(__file__).parent / "static"
INDEX = "index.html"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}
#: Scripts only from this origin, no inline script or style, no ``eval``; the API is the same
#: origin; no framing (clickjacking), no plugins, no ``<base>`` rewriting, and no form submission
#: at all (the sign-in form is handled by script: should it fail, the key still never lands in a URL).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
#: Every console answer carries these; ``Cache-Control: no-cache`` makes the browser revalidate
#: with the ETag (a 304 costs a round trip on loopback, and a new release is never served stale).
SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cache-Control", "no-cache"),
)


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str
    #: The body gzipped, when that is smaller (``None``: served as it is to everyone).
    gzipped: bytes | None = None

    @property
    def gzip_etag(self) -> str:
        return self.etag[:-1] + '-gzip"'

    def pick(self, accept_encoding: str) -> tuple[bytes, str, str | None]:
        """The body, its ETag and its ``Content-Encoding`` for a request's ``Accept-Encoding``."""
        if self.gzipped is not None and accepts_gzip(accept_encoding):
            return self.gzipped, self.gzip_etag, "gzip"
        return self.body, self.etag, None


def accepts_gzip(accept_encoding: str) -> bool:
    """Does ``Accept-Encoding`` name gzip (or ``*``) with a ``q`` above 0?"""
    for part in accept_encoding.lower().split(","):
        coding, *params = part.split(";")
        if coding.strip() not in ("gzip", "x-gzip", "*"):
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        return q > 0
    return False


def make_asset(body: bytes, content_type: str) -> Asset:
    """``body`` with its type, a strong ETag (the first 16 bytes of its SHA-256, in hex) and its
    gzip copy (``mtime=0``: the same bytes every time, so every replica sends the same ETag)."""
    packed = gzip.compress(body, compresslevel=9, mtime=0)
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    return Asset(body, content_type, etag, packed if len(packed) < len(body) else None)


@cache
def _assets() -> dict[str, Asset]:
    found: dict[str, Asset] = {}
    for path in sorted(STATIC.rglob("*")):
        content_type = CONTENT_TYPES.get(path.suffix)
        if path.is_file() and content_type is not None:
            found[path.relative_to(STATIC).as_posix()] = make_asset(path.read_bytes(), content_type)
    return found


def asset(name: str) -> Asset | None:
    """The file ``name`` (a path under ``static/``, ``""`` for the page), or ``None``. Only the
    files found when the package was first read are served: a name is a dict key, never a
    filesystem path, so ``..`` or a symlink cannot reach anything else."""
    return _assets().get(name or INDEX)


def names() -> list[str]:
    """Every file served (for the tests and the docs)."""
    return sorted(_assets())
