"""A click group that imports a subcommand only when it runs (start-up time, click's LazyGroup).

``plinth --help`` lists the commands from static descriptions, so it imports none of them;
the ``serve`` command (the server: uvicorn, the engine, storage) is never imported by the
client commands. A subcommand whose module is not installed is reported as unavailable
instead of breaking the others.
"""

from __future__ import annotations

import importlib
from typing import Any

import click


class LazyGroup(click.Group):
    """``lazy``: command name -> ("module:attribute", short help)."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy:
            return super().get_command(ctx, cmd_name)
        target, _ = self.lazy[cmd_name]
        module_name, attribute = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as missing:
            if missing.name != module_name:
                raise
            return _unavailable(cmd_name, module_name)
        command = getattr(module, attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.lazy[name][1]) for name in sorted(self.lazy)]
        rows += [(name, command.get_short_help_str()) for name, command in sorted(self.commands.items())]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _unavailable(name: str, module_name: str) -> click.Command:
    def callback() -> None:
        raise click.ClickException(f"the '{name}' command is not available in this build ({module_name} is missing)")

    return click.Command(
        name,
        callback=callback,
        help=f"(unavailable: {module_name} is missing)",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
