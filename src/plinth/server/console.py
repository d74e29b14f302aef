"""``/console``: the web console's files, open (no token: the page signs in by itself), with a
strict Content-Security-Policy and ``nosniff``; a 404 when ``--no-console`` turned it off.

The console is a client of the API on the same origin: it sends the key in ``Authorization``
from script, so the server needs no session, no cookie and no CSRF defence for it
(docs/console.md). Besides the package's files (``plinth.console``) it serves two generated
ones: ``kinds.json``, the kinds with their scope, verbs and server fields from the kind
declarations (about 2 KB where ``/openapi.json``, which says the same, weighs over half a
megabyte), and ``config.json``, what the sign-in page needs to know of this server: whether
users may sign in with an ID token, and from which issuer for which client id (public facts: an
ID token names both; no secret here). Every file goes gzipped to a browser that accepts it
(``Vary: Accept-Encoding``).
"""

from __future__ import annotations

from functools import cache

import orjson

from plinth import console
from plinth.errors import MethodNotAllowed, NotFound
from plinth.kinds import KINDS
from plinth.server.http import Request
from plinth.server.reply import Reply
from plinth.server.settings import Settings

PREFIX = "/console"
KINDS_FILE = "kinds.json"
CONFIG_FILE = "config.json"


def is_console(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


@cache
def _kinds() -> console.Asset:
    # ``verbs`` tells the console which of Create, Edit (PUT, or PATCH where a kind has no PUT)
    # and Delete to offer.
    # ``serverFields`` (a GVC's ``alias``) are left out of the editor, as the common ones are.
    # ``sealed`` (a secret's ``data``): never in a GET; the item page offers Reveal for them.
    listed = [
        {
            "name": k.name,
            "title": k.presentation.title or k.name,
            "scope": k.scope,
            "verbs": sorted(k.access.verbs),
            "serverFields": sorted(k.schema.server_fields),
            "sealed": list(k.schema.sealed),
        }
        for k in KINDS
    ]
    return console.make_asset(orjson.dumps({"kinds": listed}), "application/json")


@cache
def _config(issuer: str | None, audience: str | None) -> console.Asset:
    oidc = {"issuer": issuer, "audience": audience} if issuer else None
    return console.make_asset(orjson.dumps({"oidc": oidc}), "application/json")


def _file(name: str, settings: Settings) -> console.Asset | None:
    if name == KINDS_FILE:
        return _kinds()
    if name == CONFIG_FILE:
        return _config(settings.oidc_issuer, settings.oidc_audience)
    return console.asset(name)


def serve(req: Request, settings: Settings) -> Reply:
    """The file ``req`` names under ``/console/`` (``/console`` and ``/console/`` are the page):
    200, or 304 when the browser's ``If-None-Match`` holds the ETag of the representation it
    would get; 404 for anything else, or for everything when the console is turned off; 405 for
    a method other than GET or HEAD."""
    if not settings.console:
        raise NotFound("The console is turned off on this server (plinth serve --no-console)")
    if req.method not in ("GET", "HEAD"):
        raise MethodNotAllowed("Only GET is supported here", {"allow": "GET, HEAD"})
    name = req.path[len(PREFIX) :].lstrip("/")
    found = _file(name, settings)
    if found is None:
        raise NotFound(f"The console has no file {name!r}")
    body, etag, encoding = found.pick(req.headers.get(b"accept-encoding", b"").decode("latin-1"))
    headers = [(k.lower().encode(), v.encode()) for k, v in console.SECURITY_HEADERS]
    headers += [(b"etag", etag.encode()), (b"vary", b"Accept-Encoding")]
    if encoding:
        headers.append((b"content-encoding", encoding.encode()))
    held = req.headers.get(b"if-none-match", b"").decode("latin-1")
    if etag in (tag.strip() for tag in held.split(",")):
        return Reply(304, b"", headers, found.content_type.encode())
    return Reply(200, body, headers, found.content_type.encode())
