"""Shell completion: the values a shell is offered (the script is ``commands/completion.py``'s).

The scripts are click's (``click.shell_completion``): the shell runs ``plinth`` again with
``_PLINTH_COMPLETE=<shell>_complete`` and the words typed so far, and click answers with the
commands, options and fixed choices (``-o``, ``--ts``) it knows, files for ``-f``, and
whatever a parameter's ``shell_complete`` callback returns: :func:`complete_values`.

Values from the server are for the profile in use (``--profile``, ``--endpoint``, ``--token``,
``--org`` and ``--gvc`` typed before the word count, as in a real run):

- ``kinds``: the kinds (no aliases, to keep the list short); ``profiles``: the profile names;
- ``orgs``: the orgs the token sees; ``gvcs``: the org's GVCs;
- ``names``: the items of the kind typed before (``plinth get workload <TAB>``), in the GVC
  when the kind lives in one and a GVC is known, else across the org.

Server answers are cached in ``<config dir>/cache/`` for :data:`CACHE_TTL_S` seconds
(``$PLINTH_COMPLETION_TTL`` changes it; ``0`` turns the cache off) (a file
per endpoint, token and path, named by a checksum of them: no token is written), so that repeated
tabs do not hammer the server. Completion never prints an error: an unreachable server, a
refused token or a broken profile just completes nothing. Requests wait at most
:data:`TIMEOUT_S` and are not retried.
"""

from __future__ import annotations

import binascii
import json
import os
import time
from pathlib import Path
from typing import Any

import click

from plinth.cli.kindnames import KINDS, canonical_kind, gvc_scoped

CACHE_TTL_S = 5.0
TIMEOUT_S = 2.0


def complete_values(what: str, ctx: click.Context, incomplete: str) -> list[str]:
    """The values offered for ``incomplete`` (see the module docstring); never raises."""
    try:
        values = _values(what, ctx)
    except Exception:  # completion must stay silent whatever goes wrong
        return []
    typed = set(ctx.params.get("names") or ()) if what == "names" else set()
    return [value for value in values if value.startswith(incomplete) and value not in typed]


def _values(what: str, ctx: click.Context) -> list[str]:
    if what == "kinds":
        return list(KINDS)
    env = _env(ctx)
    ttl = float(env.environ.get("PLINTH_COMPLETION_TTL") or CACHE_TTL_S)
    if what == "profiles":
        from plinth.cli.profiles import ProfileStore

        return ProfileStore(env.config_dir).names()
    from plinth.cli.get_run import item_path
    from plinth.cli.settings import RequestFlags, context_value, resolve

    params = ctx.params
    flags = RequestFlags(profile=params.get("profile"), token=params.get("token"), endpoint=params.get("endpoint"))
    settings = resolve(env, flags)
    org = context_value(env, settings, params.get("org"), "org")
    if what == "orgs":
        return _names(env.config_dir, settings, "/org", ttl)
    if not org:
        return []
    if what == "gvcs":
        return _names(env.config_dir, settings, item_path("gvc", org, None), ttl)
    kind = canonical_kind(str(params.get("kind") or ""))
    if what != "names" or kind is None:
        return []
    gvc = context_value(env, settings, params.get("gvc"), "gvc") if gvc_scoped(kind) else None
    return _names(env.config_dir, settings, item_path(kind, org, gvc), ttl)


def _env(ctx: click.Context) -> Any:
    state = ctx.find_root().obj
    if state is not None:
        return state.env
    from plinth.cli.env import CliEnv

    return CliEnv.from_process()


def _names(config_dir: Path, settings: Any, path: str, ttl: float) -> list[str]:
    """The ``name`` of every item the list at ``path`` holds (all pages), cached for a few seconds."""
    # Two CRC-32s name the file: enough to keep keys apart, and binascii is already loaded where
    # hashlib (OpenSSL) is not; the token is in the key so that a new token sees fresh names.
    text = f"{settings.endpoint}\n{settings.token or ''}\n{path}".encode()
    key = f"{binascii.crc32(text):08x}{binascii.crc32(text[::-1]):08x}"
    cached = config_dir / "cache" / f"complete-{key}.json"
    try:
        if time.time() - cached.stat().st_mtime < ttl:
            return [str(name) for name in json.loads(cached.read_text(encoding="utf-8"))]
    except (OSError, ValueError):
        pass
    names = _fetch_names(settings, path)
    _store(cached, names)
    return names


def _fetch_names(settings: Any, path: str) -> list[str]:
    from plinth.cli.rest_run import collect_pages, user_agent
    from plinth.client import NO_RETRY, ApiClient

    client = ApiClient(settings.endpoint, settings.token, settings.insecure, TIMEOUT_S, user_agent(), retry=NO_RETRY)
    try:
        listed, _ = collect_pages(client, client.request("GET", path).json(), 0, [])
    finally:
        client.close()
    items = listed.get("items") if isinstance(listed, dict) else None
    return [name for item in items or [] if isinstance(item, dict) and (name := _path_name(item))]


def _path_name(item: dict[str, Any]) -> str:
    """What names the item in its path: the end of its self link (a quota's id: quota names
    repeat), else its name."""
    for link in item.get("links") or []:
        if isinstance(link, dict) and link.get("rel") == "self" and isinstance(link.get("href"), str):
            return str(link["href"]).rsplit("/", 1)[-1]
    return str(item.get("name") or "")


def _store(path: Path, names: list[str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps(names), encoding="utf-8")
        scratch.replace(path)
    except OSError:
        pass  # a read-only config dir only costs the cache
