"""`plinth serve --runtime containers` refuses options that could never work, before anything
starts (no port bound, no store opened): the gateway off loopback, a label that is not
KEY=VALUE, no container engine."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from plinth.cli.store.serve import serve_command
from plinth.cli.store.serve_containers import workload_endpoints
from plinth.server.settings import Settings
from plinth.server.system import discovery


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gateway-listen", "0.0.0.0:8880"], "is not a loopback address"),
        (["--gateway-listen", "localhost"], "is not HOST:PORT"),
        (["--container-label", "novalue"], "is not KEY=VALUE"),
        (["--container-label", "plinth.managed=false"], "is not KEY=VALUE (other than plinth.managed)"),
        (["--log-retention-bytes", "0"], "--log-retention-bytes"),
        (["--log-retention-bytes", "lots"], "--log-retention-bytes"),
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


@pytest.mark.parametrize(
    ("runtime", "base", "listen", "endpoint"),
    [
        ("containers", "cpln.app", "127.0.0.1:8880", "http://web-x.localhost:8880"),
        ("containers", "apps.test", "127.0.0.1:80", "http://web-x.apps.test"),
        ("simulated", "cpln.app", "127.0.0.1:8880", "https://web-x.cpln.app"),
    ],
)
def test_workload_endpoints_are_the_gateways_with_the_container_runtime(
    runtime: str, base: str, listen: str, endpoint: str
) -> None:
    """With --runtime containers a workload's status.endpoint is a URL the gateway answers."""
    domain, form = workload_endpoints(runtime, base, {"gateway_listen": listen})
    assert form.format(host=f"web-x.{domain}") == endpoint


def test_discovery_names_the_data_plane_as_logs_with_the_container_runtime_only() -> None:
    base = {"host": "127.0.0.1", "port": 8080, "public_url": "https://plinth.example"}
    containers = Settings(**base, runtime="containers", dataplane_url="http://127.0.0.1:8881")  # type: ignore[arg-type]
    endpoints = orjson.loads(discovery(containers))["endpoints"]
    assert endpoints["logs"] == "http://127.0.0.1:8881"
    assert endpoints["api"] == endpoints["metrics"] == "https://plinth.example"
    simulated = orjson.loads(discovery(Settings(**base)))["endpoints"]  # type: ignore[arg-type]
    assert simulated["logs"] == simulated["api"] == "https://plinth.example"
