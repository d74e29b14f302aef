"""CliEnv: every side effect a command may have, in one injected object.

Commands never touch ``sys.stdout``, ``os.environ``, the clock or the network directly; they
ask the environment. Production builds it with :meth:`CliEnv.from_process`; tests build one
with string buffers, a fixed clock, a temporary config folder and, where they need it, a
fake editor or sleep. (Model: httpie's ``Environment``, gh's ``iostreams``.)

Fields:

- ``stdin``/``stdout``/``stderr``: text streams; only ``main`` and the writer write to them.
- ``stdout_isatty``/``stderr_isatty``: colour and box-drawing tables need both to be TTYs.
- ``environ``: the variables commands may read (``PLINTH_*``, ``VISUAL``, ``EDITOR``, ``TZ``...).
- ``config_dir``: where profiles live (resolution in :func:`default_config_dir`).
- ``now``: the clock, for ``--ts age`` and the ``--debug`` time stamps.
- ``sleep``: how retries wait.
- ``run_editor``: runs the editor command on a file and returns its exit code.
- ``make_client``: builds the HTTP client; tests may substitute a subclass.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plinth.client import ApiClient


def default_config_dir(environ: Mapping[str, str]) -> Path:
    """Where profiles live.

    1. ``$PLINTH_HOME`` when set and not empty;
    2. else ``$XDG_CONFIG_HOME/plinth``;
    3. else ``~/.config/plinth`` (``$HOME`` first, then the password database).
    """
    if environ.get("PLINTH_HOME"):
        return Path(environ["PLINTH_HOME"])
    if environ.get("XDG_CONFIG_HOME"):
        return Path(environ["XDG_CONFIG_HOME"]) / "plinth"
    home = environ.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".config" / "plinth"


def run_editor_command(command: list[str], environ: Mapping[str, str]) -> int:
    """Run the editor with the terminal inherited; return its exit code."""
    import subprocess

    try:
        return subprocess.call(command, env=dict(environ))
    except FileNotFoundError:
        return 127


def _make_client(**kwargs: Any) -> ApiClient:
    from plinth.client import ApiClient

    return ApiClient(**kwargs)


@dataclass
class CliEnv:
    """The injected environment; see the module docstring for what each field is for."""

    stdin: IO[str]
    stdout: IO[str]
    stderr: IO[str]
    environ: Mapping[str, str]
    config_dir: Path
    stdin_isatty: bool = False
    stdout_isatty: bool = False
    stderr_isatty: bool = False
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    sleep: Callable[[float], None] = time.sleep
    run_editor: Callable[[list[str], Mapping[str, str]], int] = run_editor_command
    make_client: Callable[..., ApiClient] = _make_client

    @classmethod
    def from_process(cls) -> CliEnv:
        environ = os.environ
        return cls(
            stdin=sys.stdin,
            stdout=sys.stdout,
            stderr=sys.stderr,
            environ=environ,
            config_dir=default_config_dir(environ),
            stdin_isatty=_isatty(sys.stdin),
            stdout_isatty=_isatty(sys.stdout),
            stderr_isatty=_isatty(sys.stderr),
        )

    @property
    def is_terminal(self) -> bool:
        """Colour and box tables need both output streams on a terminal (docs/cli.md, Output formats)."""
        return self.stdout_isatty and self.stderr_isatty

    def editor_command(self) -> list[str]:
        """``$VISUAL``, else ``$EDITOR``, else ``vi``, split on whitespace like the official CLI."""
        command = self.environ.get("VISUAL") or self.environ.get("EDITOR") or "vi"
        return command.split()

    def temp_dir(self) -> str:
        import tempfile

        return self.environ.get("TMPDIR") or tempfile.gettempdir()


def _isatty(stream: IO[str] | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, AttributeError):
        return False
