"""``plinth rest get -o json`` must not import what it does not need (start-up time, issue 4).

The check runs the real entry point in a fresh interpreter against a canned server and
lists ``sys.modules`` afterwards; it asserts which modules are absent, not how long anything took.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.canned_server import Canned, CannedServer
from tests.cli.golden_docs import DOMAIN, dumps

SRC = str(Path(__file__).resolve().parents[2] / "src")
HEAVY = [
    "yaml",
    "httpx",
    "requests",
    "pygments",
    "uvicorn",
    "pydantic",
    "jsonschema",
    "hcl2",
    "orjson",
    "plinth.server",
    "plinth.engine",
    "plinth.storage",
    "plinth.auth",
    "plinth.kinds",
    "plinth.convert",
    "plinth.cli.serve",
    "plinth.cli.output.jsyaml",
    "plinth.cli.output.text",
    "plinth.cli.editor",
    "asyncio",
]
PROBE = """
import sys
from plinth.cli.main import run
code = run(sys.argv[1:])
sys.stdout.flush()
print("\\nMODULES=" + __import__("json").dumps(sorted(sys.modules)))
sys.exit(code)
"""


def run_probe(args: list[str], home: Path) -> tuple[int, set[str]]:
    environ = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": SRC, "PLINTH_HOME": str(home), "HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=environ, timeout=60, check=False
    )
    modules = json.loads(done.stdout.rsplit("MODULES=", 1)[1])
    return done.returncode, set(modules)


def test_rest_get_json_imports_no_heavy_module(tmp_path: Path) -> None:
    path = "/org/acme/domain/api.example.com"
    with CannedServer({("GET", path): Canned(200, dumps(DOMAIN))}) as server:
        code, modules = run_probe(
            ["rest", "get", path, "-o", "json", "--endpoint", server.endpoint, "--token", "t"], tmp_path
        )
    assert code == 0
    assert "plinth.client.http" in modules  # the probe really ran the request path
    loaded = [name for name in HEAVY if name in modules]
    assert loaded == []


def test_help_imports_no_subcommand(tmp_path: Path) -> None:
    code, modules = run_probe(["--help"], tmp_path)
    assert code == 0
    assert not {"plinth.cli.rest", "plinth.cli.profile_cmd", "plinth.cli.serve", "plinth.client"} & modules
