"""What ``make`` installs: ``make run`` the runtime dependencies only, the test targets the test extras.

Read from ``make --dry-run --always-make``, which prints every command a target would run from a
clone with no ``.venv``, and runs none of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def planned(target: str) -> list[str]:
    """The commands ``make TARGET`` would run from scratch (nothing is run)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    done = subprocess.run(
        ["make", "--dry-run", "--always-make", "-C", str(ROOT), target],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def installs(commands: list[str]) -> list[str]:
    return [command for command in commands if "pip install" in command and "--upgrade pip" not in command]


def test_make_run_installs_the_runtime_dependencies_only() -> None:
    commands = planned("run")
    assert installs(commands) == [".venv/bin/python -m pip install --quiet -e ."]
    assert any("plinth serve" in command and "--init-profile local" in command for command in commands)


@pytest.mark.parametrize("target", ["venv", "lint", "typecheck", "pytest"])
def test_the_test_targets_install_the_test_extras(target: str) -> None:
    assert installs(planned(target)) == [".venv/bin/python -m pip install --quiet -e '.[test]'"]


def test_make_run_chooses_the_containers_runtime_when_the_tools_are_there() -> None:
    recipe = "\n".join(planned("run"))
    assert "command -v caddy" in recipe and "command -v podman" in recipe and "runtime=containers" in recipe
    assert "docker info" in recipe  # a docker client whose daemon does not answer runs nothing
    assert "runtime=simulated" in recipe and "apt-get install podman caddy" in recipe  # says what to install
    assert "--runtime $runtime" in recipe
