"""``plinth apply -f`` and ``plinth delete -f``: their options (the behaviour is ``apply_run``'s)."""

from __future__ import annotations

from typing import Any

import click
from click.core import ParameterSource

from plinth.cli.options import F, flags_from, typed_options

#: Documents in flight: enough for the server to share its durable commits among them (SQLite's
#: group commit, docs/write-path.md); a 1,000-document stack applied 2.6 s at 4, 1.3-1.8 s at 32.
DEFAULT_CONCURRENCY = 32
MAX_CONCURRENCY = 64
#: ``--ready-timeout``'s default: the official CLI's wait (60 checks, 5 s apart); ``cli/ready.py``
#: holds the same figure, kept here so ``--help`` imports nothing more.
DEFAULT_READY_TIMEOUT_S = 300
FILES_HELP = "A file, a directory (its *.yaml, *.yml, *.json in name order) or - for standard input; repeatable"


def _files_options(function: F) -> F:
    function = click.option(
        "--concurrency",
        type=click.IntRange(1, MAX_CONCURRENCY),
        default=DEFAULT_CONCURRENCY,
        show_default=True,
        help="How many documents may be sent at once (each over its own kept-alive connection)",
    )(function)
    function = click.option(
        "--ordered",
        is_flag=True,
        help="Print the lines in the order the items are written in, not as the answers come",
    )(function)
    function = click.option("--continue-on-error", is_flag=True, help="Go on with the other documents after one fails")(
        function
    )
    function = click.option(
        "--dry-run", is_flag=True, help="Ask the server to check every document, and change nothing"
    )(function)
    return click.option(
        "--file", "-f", "files", multiple=True, required=True, type=click.Path(allow_dash=True), help=FILES_HELP
    )(function)


def _typed(function: F) -> F:
    return typed_options(function, with_format=False)


def _call(options: dict[str, Any], **extra: Any) -> Any:
    from plinth.cli.apply_run import FilesCall

    return FilesCall(
        files=tuple(options["files"]),
        flags=flags_from(options),
        org=options["org"],
        gvc=options["gvc"],
        dry_run=options["dry_run"],
        keep_going=options["continue_on_error"],
        workers=options["concurrency"],
        ordered=options["ordered"],
        **extra,
    )


@click.command(
    "apply",
    short_help="Create or update the items of files (YAML or JSON)",
    help="Create or update the items of files (YAML or JSON), targets before what links to them, "
    "printing one line per item as its answer comes: created, updated or unchanged.",
)
@_files_options
@click.option("--prune", is_flag=True, help="Then delete the items carrying --selector's tag that the files lack")
@click.option("--selector", metavar="TAG=VALUE", help="The tag that marks the items --prune may delete")
@click.option("--yes", "-y", is_flag=True, help="Prune without asking")
@click.option(
    "--ready",
    is_flag=True,
    help="Then wait until every workload of the files is ready at its latest version (as cpln apply --ready)",
)
@click.option(
    "--ready-timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_READY_TIMEOUT_S,
    show_default=True,
    metavar="SECONDS",
    help="How long --ready waits before it fails, naming the workloads not ready and why",
)
@_typed
def apply_command(**options: Any) -> None:
    from plinth.cli.apply_run import run_apply
    from plinth.cli.prune import parse_selector

    if options["prune"] != bool(options["selector"]):
        raise click.UsageError("--prune and --selector go together: --prune --selector TAG=VALUE")
    if options["ready"] and options["dry_run"]:
        raise click.UsageError("--ready waits for what was applied, and --dry-run applies nothing")
    context = click.get_current_context()
    if not options["ready"] and context.get_parameter_source("ready_timeout") is not ParameterSource.DEFAULT:
        raise click.UsageError("--ready-timeout says how long --ready waits: give --ready too")
    selector = parse_selector(options["selector"]) if options["selector"] else None
    ready_timeout = options["ready_timeout"] if options["ready"] else None
    call = _call(options, prune=options["prune"], selector=selector, yes=options["yes"], ready_timeout=ready_timeout)
    run_apply(click.get_current_context().find_root().obj, call)


@click.command(
    "delete",
    short_help="Delete the items of files, in the reverse order of apply",
    help="Delete the items of files (YAML or JSON), what links to an item before it; "
    "an item that is already gone counts as deleted.",
)
@_files_options
@_typed
def delete_command(**options: Any) -> None:
    from plinth.cli.apply_run import run_delete

    run_delete(click.get_current_context().find_root().obj, _call(options))
