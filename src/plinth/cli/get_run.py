"""Running ``plinth get``: the path from the kind and names, then ``rest get``'s request and output."""

from __future__ import annotations

from typing import Any

from plinth.cli.errors import CliError
from plinth.cli.kindnames import gvc_scoped
from plinth.cli.output import get_formatter
from plinth.cli.rest_run import RestCall, collect_pages, note_more, open_client, run_rest, write_document
from plinth.cli.settings import RequestFlags, context_value, resolve
from plinth.cli.state import RunState

WATCH_NAMES = "--watch follows a whole list: give the kind without names (a list watch shows each item's changes)"


def run_get(
    state: RunState,
    kind: str,
    names: tuple[str, ...],
    flags: RequestFlags,
    org_flag: str | None,
    gvc_flag: str | None,
    watch: bool,
) -> None:
    state.error_output = flags.output
    settings = resolve(state.env, flags)
    org = context_value(state.env, settings, org_flag, "org")
    gvc = context_value(state.env, settings, gvc_flag, "gvc") if gvc_scoped(kind) else None
    if kind != "org" and not org:
        raise CliError("No org: give --org, set $PLINTH_ORG, or set one in the profile (plinth profile update --org)")
    if names and gvc_scoped(kind) and not gvc:
        raise CliError(f"A {kind} lives in a GVC: give --gvc, set $PLINTH_GVC, or set one in the profile")
    if watch:
        if names:
            raise CliError(WATCH_NAMES)
        return run_rest(state, RestCall("get", item_path(kind, org, gvc, None), flags, watch="all"))
    if len(names) <= 1:
        return run_rest(state, RestCall("get", item_path(kind, org, gvc, names[0] if names else None), flags))
    _get_several(state, kind, org, gvc, names, flags)


def _get_several(
    state: RunState, kind: str, org: str | None, gvc: str | None, names: tuple[str, ...], flags: RequestFlags
) -> None:
    settings = resolve(state.env, flags)
    state.color = settings.color
    client = open_client(state, settings)
    try:
        items: list[Any] = [client.request("GET", item_path(kind, org, gvc, name)).json() for name in names]
        doc = {"kind": "list", "itemKind": kind, "items": items}
        doc, more = collect_pages(client, doc, settings.max, [])
        write_document(state, client, get_formatter(settings.output), doc, settings)
        if more:
            note_more(state, settings, flags)
    finally:
        client.close()


def item_path(kind: str, org: str | None, gvc: str | None, name: str | None = None) -> str:
    """The API path of a kind's collection (``name`` ``None``) or of one item."""
    if kind == "org":
        return "/org" + (f"/{name}" if name else "")
    base = f"/org/{org}/gvc/{gvc}/{kind}" if gvc and gvc_scoped(kind) else f"/org/{org}/{kind}"
    return base + (f"/{name}" if name else "")
