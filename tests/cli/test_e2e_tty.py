"""Colour is for terminals only (docs/cli.md, Output formats): on a TTY, JSON is coloured and tables use box-drawing
borders; a pipe never gets colour; ``--no-color`` on a TTY gives the ASCII tables."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.cli.conftest import PlinthCli
from tests.support.server import ServerProcess

ESC = "\x1b["


def _on_a_terminal(cli: PlinthCli, *args: str) -> str:
    """Run ``plinth`` with stdout and stderr on one pseudo-terminal; return what it printed."""
    leader, follower = pty.openpty()
    argv = [sys.executable, "-m", "plinth", *args, "--endpoint", str(cli.endpoint), "--token", str(cli.token)]
    proc = subprocess.Popen(argv, stdout=follower, stderr=follower, stdin=subprocess.DEVNULL, env=cli.environ())
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode()


def test_json_is_coloured_on_a_terminal_and_plain_in_a_pipe(cli: PlinthCli, server: ServerProcess) -> None:
    tty = _on_a_terminal(cli, "rest", "get", "/org/acme", "-o", "json")
    assert ESC in tty and '"acme"' in tty.replace(ESC + "33m", "").replace(ESC + "0m", "")
    piped = cli("rest", "get", "/org/acme", "-o", "json")
    assert piped.code == 0 and ESC not in piped.stdout and '"name": "acme"' in piped.stdout


def test_tables_use_box_drawing_on_a_terminal_and_ascii_with_no_color(cli: PlinthCli, server: ServerProcess) -> None:
    tty = _on_a_terminal(cli, "rest", "get", "/org/acme/group")
    assert "┌" in tty and "│" in tty and "superusers" in tty
    plain = _on_a_terminal(cli, "rest", "get", "/org/acme/group", "--no-color")
    assert "┌" not in plain and ESC not in plain and plain.lstrip().startswith("+")
    piped = cli("rest", "get", "/org/acme/group")
    assert piped.stdout.startswith("+") and "┌" not in piped.stdout
