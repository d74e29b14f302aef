"""``plinth completion bash|zsh|fish``: print the shell's completion script.

The scripts are click's (``click.shell_completion``): the shell runs ``plinth`` again with
``_PLINTH_COMPLETE=<shell>_complete`` and the words typed so far, and click answers from the
commands' parameters; the values from the server are ``cli/completion.py``'s.
"""

from __future__ import annotations

import click

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_PLINTH_COMPLETE"


@click.command(
    "completion",
    short_help="Print a shell completion script (bash, zsh, fish)",
    help="Print the completion script for SHELL. Load it from your shell's start-up file, e.g. "
    "'eval \"$(plinth completion bash)\"' in ~/.bashrc, 'eval \"$(plinth completion zsh)\"' in ~/.zshrc, "
    "or 'plinth completion fish > ~/.config/fish/completions/plinth.fish'.",
)
@click.argument("shell", type=click.Choice(SHELLS))
def completion_command(shell: str) -> None:
    from click.shell_completion import get_completion_class

    ctx = click.get_current_context()
    root = ctx.find_root()
    completer = get_completion_class(shell)
    assert completer is not None  # the three shells above are click's own
    script = completer(root.command, {}, root.info_name or "plinth", COMPLETE_VAR).source()
    root.obj.env.stdout.write(script if script.endswith("\n") else script + "\n")
