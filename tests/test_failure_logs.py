"""The logs a failed test's report carries (``tests/support/failure_logs.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.failure_logs import log_tails


@dataclass
class Logged:
    log_path: Path


def test_the_tails_of_every_logged_fixture_are_found_in_values_and_tuples(tmp_path: Path) -> None:
    server, gateway = tmp_path / "server.log", tmp_path / "caddy.log"
    server.write_text("started\n" + "x" * 50 + "the end\n")
    gateway.write_text("loaded\n")
    funcargs = {"server": Logged(server), "gateway": (Logged(gateway), "127.0.0.1:1"), "other": 3}
    tails = dict(log_tails(funcargs, chars=8))
    assert tails == {f"log of server ({server})": "the end\n", f"log of gateway ({gateway})": "loaded\n"}


def test_a_log_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    ((title, text),) = log_tails({"server": Logged(tmp_path / "missing.log")})
    assert "server" in title and text.startswith("(unreadable:")
