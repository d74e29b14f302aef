"""`plinth serve --runtime containers` refuses options that could never work, before anything
starts (no port bound, no store opened): the gateway off loopback, a label that is not
KEY=VALUE, no container engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from plinth.cli.store.serve import serve_command


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gateway-listen", "0.0.0.0:8880"], "is not a loopback address"),
        (["--gateway-listen", "localhost"], "is not HOST:PORT"),
        (["--container-label", "novalue"], "is not KEY=VALUE"),
        (["--container-label", "plinth.managed=false"], "is not KEY=VALUE (other than plinth.managed)"),
    ],
)
def test_bad_container_options_are_refused(args: list[str], message: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    result = CliRunner().invoke(serve_command, ["--runtime", "containers", "--data-dir", str(data), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not data.exists()  # refused before the store was touched


def test_no_engine_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # neither podman nor docker nor caddy on it
    result = CliRunner().invoke(serve_command, ["--runtime", "containers", "--data-dir", str(tmp_path / "d")])
    assert result.exit_code == 1
    assert "no container engine found" in result.output and "apt-get install podman" in result.output
