"""The ``plinth`` entry point: build the click app, run it, report failures, pick the exit code.

This is the only module that prints errors or chooses exit codes (gh's ``ghcmd.Main``):

- 0: success;
- 1: the request or the input failed (server errors, no connection, bad file, format errors);
- 2: usage errors; the message is followed by the command's help;
- 3, 4, 5: ``plinth serve`` could not start: a worker failed, the address is in use, the store
  is newer than this Plinth (``cli/errors.py``).

Server and network errors are printed on standard error in the ``-o`` the user gave
(``plinth.cli.output.errors``), the same bytes the official CLI prints.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from plinth import __version__
from plinth.cli.env import CliEnv
from plinth.cli.errors import BatchFailed, CliError, ExitCode
from plinth.cli.lazy import LazyGroup
from plinth.cli.state import RunState

COMMANDS = {
    "rest": ("plinth.cli.commands.rest:rest_group", "Submit REST requests against the API"),
    "apply": ("plinth.cli.commands.apply:apply_command", "Create or update the items of files (YAML or JSON)"),
    "delete": ("plinth.cli.commands.apply:delete_command", "Delete the items of files, in the reverse order of apply"),
    "get": ("plinth.cli.commands.get:get_command", "Show items of a kind: plinth get KIND [NAME...]"),
    "completion": (
        "plinth.cli.commands.completion:completion_command",
        "Print a shell completion script (bash, zsh, fish)",
    ),
    "profile": ("plinth.cli.commands.profile:profile_group", "Manage connection profiles"),
    "serve": ("plinth.cli.store.serve:serve_command", "Run the Plinth API server"),
    "export": ("plinth.cli.store.transfer:export_command", "Write a whole store as JSON lines"),
    "import": ("plinth.cli.store.transfer:import_command", "Load an export into a new, empty store"),
    "backup": ("plinth.cli.store.backup:backup_command", "Back up a SQLite store while its server serves"),
    "signing-key": (
        "plinth.cli.store.signing_key:signing_key_command",
        "Rotate the key that signs service account keys",
    ),
    "secrets": ("plinth.cli.store.secrets:secrets_command", "Rotate and check the keys that seal secrets at rest"),
}


def build_app() -> click.Group:
    @click.group("plinth", cls=LazyGroup, lazy=COMMANDS, help="Plinth: a self-hosted Control Plane API and its CLI.")
    @click.version_option(__version__, prog_name="plinth")
    def app() -> None:
        pass

    return app


def run(argv: list[str] | None = None, env: CliEnv | None = None) -> int:
    """Run the CLI with ``argv`` in ``env`` and return the exit code (tests call this directly)."""
    env = env or CliEnv.from_process()
    state = RunState(env)
    app = build_app()
    try:
        app.main(args=argv, prog_name="plinth", standalone_mode=False, obj=state)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.UsageError as usage:
        return _report_usage(env, usage)
    except click.Abort:
        env.stderr.write("Aborted!\n")
        return ExitCode.FAILED
    except click.ClickException as failure:
        env.stderr.write(f"Error: {failure.format_message()}\n")
        return failure.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return ExitCode.FAILED
    except Exception as error:
        return _report_failure(state, error)
    return ExitCode.OK


def _report_usage(env: CliEnv, usage: click.UsageError) -> int:
    help_text = usage.ctx.get_help() if usage.ctx is not None else ""
    env.stderr.write(f"Error: {usage.format_message()}\n\n{help_text}\n")
    return ExitCode.USAGE


def _report_failure(state: RunState, error: Exception) -> int:
    env = state.env
    if state.transcript is not None:
        state.transcript.log("Abnormal exit ")
    if isinstance(error, BatchFailed):
        for where, failure in error.failures:
            env.stderr.write(f"{where}:\n")
            shown = _render_remote(state, failure)
            env.stderr.write(shown if shown is not None else f"{failure}\n\n")
        env.stderr.write(error.message + "\n")
        return ExitCode.FAILED
    shown = _render_remote(state, error)
    if shown is not None:
        env.stderr.write(shown)
        return ExitCode.FAILED
    if isinstance(error, CliError):
        if error.prefix:
            env.stderr.write(error.prefix + "\n")
        env.stderr.write(error.message + ("\n\n" if error.blank_line else "\n"))
        return error.exit_code
    raise error


def _render_remote(state: RunState, error: BaseException) -> str | None:
    """A server or network error as the official CLI prints it in the run's ``-o``; ``None``
    for any other exception."""
    from plinth.client import TransportError, error_body
    from plinth.errors import APIError

    if not isinstance(error, APIError | TransportError):
        return None
    from plinth.cli.output.base import RenderContext
    from plinth.cli.output.errors import render_error

    shown = error_body(error) if isinstance(error, APIError) else {"code": error.code, "message": error.message}
    return render_error(shown, state.error_output, RenderContext(color=state.color)) + "\n\n"


def main() -> NoReturn:
    sys.exit(run())


if __name__ == "__main__":
    main()
