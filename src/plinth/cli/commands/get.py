"""``plinth get KIND [NAME...]``: ``plinth rest get`` of the path a kind and names stand for.

- ``KIND`` is a kind, its plural or a short name (``kindnames``); ``plinth get vs`` lists
  volume sets;
- the org comes from ``--org``, ``$PLINTH_ORG`` or the profile; the GVC likewise, for the
  kinds that live in one. A GVC-scoped kind without a GVC lists the org's items of every GVC
  (the API's org-wide list); naming items needs the GVC;
- no name: the list (``--max`` pages, as ``rest get``); one name: that item; several: a
  ``kind: list`` of them in the order given, so every ``-o`` works on it;
- ``--watch`` is served by the watch stream of ``plinth rest get --watch`` (issue 12): this
  command only builds the path and hands it over (:func:`run_get`).

The output options are ``rest get``'s (``options.typed_options``). Typing a path stays ``plinth rest``.
"""

from __future__ import annotations

from typing import Any

import click

from plinth.cli.kindnames import KINDS, canonical_kind
from plinth.cli.options import complete_lazily, flags_from, typed_options


@click.command(
    "get",
    short_help="Show items of a kind: plinth get KIND [NAME...]",
    help="Show one or more items of a kind, or list them all: plinth get workload web --gvc prod. "
    "KIND may be plural or a short name (vs, sa, id, loc, w).",
)
@click.argument("kind", shell_complete=complete_lazily("kinds"))
@click.argument("names", nargs=-1, shell_complete=complete_lazily("names"))
@click.option("--watch", "-w", is_flag=True, help="Go on printing changes (needs the server's watch stream)")
@typed_options
def get_command(**options: Any) -> None:
    kind = canonical_kind(options["kind"])
    if kind is None:
        raise click.BadParameter(f"'{options['kind']}' is not a kind; one of: {', '.join(KINDS)}", param_hint="KIND")
    from plinth.cli.get_run import run_get

    state = click.get_current_context().find_root().obj
    run_get(state, kind, tuple(options["names"]), flags_from(options), options["org"], options["gvc"], options["watch"])
