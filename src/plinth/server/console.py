"""``/console``: the web console's files, open (no token: the page signs in by itself), with a
strict Content-Security-Policy and ``nosniff``; a 404 when ``--no-console`` turned it off.

The console is a client of the API on the same origin: it sends the key in ``Authorization``
from script, so the server needs no session, no cookie and no CSRF defence for it
(docs/console.md). Besides the package's files (``plinth.console``) it serves ``kinds.json``,
the kinds and their scope from the kind declarations: under 1 KB where ``/openapi.json``, which
says the same, weighs over half a megabyte.
"""

from __future__ import annotations

from functools import cache

import orjson

from plinth import console
from plinth.errors import MethodNotAllowed, NotFound
from plinth.kinds import KINDS
from plinth.server.http import Request
from plinth.server.reply import Reply

PREFIX = "/console"
KINDS_FILE = "kinds.json"


def is_console(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


@cache
def _kinds() -> console.Asset:
    listed = [{"name": k.name, "title": k.title or k.name, "scope": k.scope} for k in KINDS]
    return console.make_asset(orjson.dumps({"kinds": listed}), "application/json")


def serve(req: Request, enabled: bool) -> Reply:
    """The file ``req`` names under ``/console/`` (``/console`` and ``/console/`` are the page):
    200, or 304 when the browser's ``If-None-Match`` holds its ETag; 404 for anything else, or
    for everything when the console is turned off; 405 for a method other than GET or HEAD."""
    if not enabled:
        raise NotFound("The console is turned off on this server (plinth serve --no-console)")
    if req.method not in ("GET", "HEAD"):
        raise MethodNotAllowed("Only GET is supported here", {"allow": "GET, HEAD"})
    name = req.path[len(PREFIX) :].lstrip("/")
    found = _kinds() if name == KINDS_FILE else console.asset(name)
    if found is None:
        raise NotFound(f"The console has no file {name!r}")
    headers = [(k.lower().encode(), v.encode()) for k, v in console.SECURITY_HEADERS]
    headers.append((b"etag", found.etag.encode()))
    if req.headers.get(b"if-none-match", b"").decode("latin-1") == found.etag:
        return Reply(304, b"", headers, found.content_type.encode())
    return Reply(200, found.body, headers, found.content_type.encode())
