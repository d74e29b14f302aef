"""The ``plinth`` entry point. Subcommands load lazily so ``plinth rest get`` starts fast."""

from __future__ import annotations

import importlib
from typing import Any

import click

LAZY_COMMANDS = {"serve": ("plinth.cli.serve", "serve_command")}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            module, attr = LAZY_COMMANDS[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attr)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup)
def cli() -> None:
    """Plinth: a self-hosted control plane API server and its client."""


def main(argv: Any = None) -> None:
    cli.main(args=argv, prog_name="plinth")
