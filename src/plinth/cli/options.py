"""The click options the client commands share (``rest``, ``get``, ``apply``, ``delete``), and
how their values become :class:`~plinth.cli.settings.RequestFlags`.

Options and help groups follow the official CLI's (CLI commands/rest.js); ``--output`` choices come
from the formatter registry so help and validation cannot drift. Values a shell completes come from
``cli/completion.py``, imported only when a shell asks (start-up time).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from plinth.cli.output import FORMAT_NAMES
from plinth.cli.settings import RequestFlags

F = Callable[..., Any]


def _apply(function: F, decorators: list[Any]) -> F:
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def _profile_option() -> Any:
    return click.option(
        "--profile",
        help="The profile to use (default: $PLINTH_PROFILE, then the default profile)",
        shell_complete=complete_lazily("profiles"),
    )


def _format_options() -> list[Any]:
    return [
        click.option("--output", "-o", type=click.Choice(FORMAT_NAMES), help="Output format"),
        click.option("--color/--no-color", default=None, help="Colour output on a terminal [default: on]"),
        click.option("--ts", type=click.Choice(("iso", "local", "age")), help="How to show timestamps"),
        click.option(
            "--max",
            "max_items",
            type=int,
            default=None,
            help="Follow list pages until this many items; below 1 fetches all [default: 50]",
        ),
    ]


def _connection_options() -> list[Any]:
    return [
        click.option("--token", help="Bearer token (default: $PLINTH_TOKEN, then the profile's)"),
        click.option("--endpoint", help="API endpoint (default: $PLINTH_ENDPOINT, then the profile's)"),
        click.option("--insecure", "-k", is_flag=True, default=None, help="Accept self-signed TLS certificates"),
        click.option("--verbose", "-v", is_flag=True, help="Log what the CLI does on standard error"),
        click.option("--debug", "-d", is_flag=True, help="Show every HTTP request and response on standard error"),
    ]


def request_options(function: F) -> F:
    """The options every ``rest`` subcommand shares, in the official CLI's groups."""
    header = click.option(
        "--header",
        "-H",
        "headers",
        multiple=True,
        metavar="TEXT",
        help='HTTP headers in curl format: "x-header: value" (repeatable)',
    )
    decorators = [click.argument("path"), header, _profile_option(), *_format_options(), *_connection_options()]
    return _apply(function, decorators)


def typed_options(function: F, with_format: bool = True) -> F:
    """What the typed commands (``get``, ``apply``, ``delete``) share with ``rest``, plus
    ``--org`` and ``--gvc`` (default: ``$PLINTH_ORG`` / ``$PLINTH_GVC``, then the profile's).
    ``with_format=False`` keeps only ``-o`` (which says how errors print) of the format options."""
    context = [
        click.option(
            "--org", help="The org (default: $PLINTH_ORG, then the profile's)", shell_complete=complete_lazily("orgs")
        ),
        click.option(
            "--gvc", help="The GVC (default: $PLINTH_GVC, then the profile's)", shell_complete=complete_lazily("gvcs")
        ),
        _profile_option(),
    ]
    errors_only = click.option("--output", "-o", type=click.Choice(FORMAT_NAMES), help="How server errors print")
    formats = _format_options() if with_format else [errors_only]
    return _apply(function, [*context, *formats, *_connection_options()])


def complete_lazily(what: str) -> Callable[..., list[Any]]:
    """A ``shell_complete`` callback that imports the completion code only when a shell asks."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from plinth.cli.completion import complete_values

        return complete_values(what, ctx, incomplete)

    return complete


def flags_from(options: dict[str, Any]) -> RequestFlags:
    return RequestFlags(
        profile=options["profile"],
        token=options["token"],
        endpoint=options["endpoint"],
        insecure=options["insecure"],
        output=options["output"],
        color=options.get("color"),
        ts=options.get("ts"),
        max=options.get("max_items"),
        verbose=options["verbose"],
        debug=options["debug"],
    )
