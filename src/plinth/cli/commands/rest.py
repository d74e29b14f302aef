"""``plinth rest <verb> <path>``: the options of the seven subcommands (behaviour in ``rest_run``).

Options and help groups follow the official CLI's (CLI commands/rest.js); the options every
client command shares are in ``cli/options.py``.
"""

from __future__ import annotations

from typing import Any

import click

from plinth.cli.options import F, flags_from, request_options

DESCRIPTIONS = {
    "create": "Submit a POST request followed by a GET request against the referenced path",
    "delete": "Submit a DELETE request against the referenced path",
    "edit": "Launches the default editor with the contents of the referenced path",
    "get": "Submit a GET request against the referenced path",
    "patch": "Submit a PATCH request against the referenced path",
    "post": "Submit a POST request against the referenced path",
    "put": "Submit a PUT request against the referenced path",
}
WITH_BODY = ("create", "patch", "post", "put")


def body_option(function: F) -> F:
    return click.option(
        "--file",
        "-f",
        "file",
        metavar="PATH",
        help="File to load the request from (JSON or YAML). Use `--file -` to read standard input.",
    )(function)


def watch_options(function: F) -> F:
    """``get``'s watch flags (cli/rest_watch.py)."""
    function = click.option(
        "--watch-only", "watch_only", is_flag=True, help="Print changes as they happen, without the current items"
    )(function)
    return click.option(
        "--watch", "-w", "watch", is_flag=True, help="Print the current items, then each change as it happens"
    )(function)


def make_command(verb: str) -> click.Command:
    def callback(**options: Any) -> None:
        from plinth.cli.rest_run import RestCall, run_rest

        call = RestCall(
            verb=verb,
            path=options["path"],
            flags=flags_from(options),
            file=options.get("file"),
            headers=tuple(options["headers"]),
            watch="only" if options.get("watch_only") else "all" if options.get("watch") else None,
        )
        run_rest(click.get_current_context().find_root().obj, call)

    function: F = callback
    if verb in WITH_BODY:
        function = body_option(function)
    if verb == "get":
        function = watch_options(function)
    function = request_options(function)
    return click.command(verb, help=DESCRIPTIONS[verb], short_help=DESCRIPTIONS[verb])(function)


@click.group("rest", help="Submit REST requests against the API")
def rest_group() -> None:
    pass


for _verb in sorted(DESCRIPTIONS):
    rest_group.add_command(make_command(_verb))
