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
    "plinth.cli.store",
    "plinth.cli.output.jsyaml",
    "plinth.cli.output.text",
    "plinth.cli.editor",
    "asyncio",
]
PROBE = """
import sys
from plinth.cli.main import run
try:
    code = run(sys.argv[1:])
except SystemExit as done:  # a completion request exits from inside click
    code = done.code
sys.stdout.flush()
print("\\nMODULES=" + __import__("json").dumps(sorted(sys.modules)))
sys.exit(code)
"""


def run_probe(args: list[str], home: Path, extra: dict[str, str] | None = None) -> tuple[int, set[str]]:
    environ = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": SRC, "PLINTH_HOME": str(home), "HOME": str(home)}
    environ.update(extra or {})
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
    assert not {"plinth.cli.commands", "plinth.cli.store", "plinth.client"} & modules


#: What ``plinth get`` and a completion request may import beyond ``plinth rest get``: their
#: own small modules, and click's completion support.
OWN_MODULES = {
    "plinth.cli.commands.get",
    "plinth.cli.get_run",
    "plinth.cli.kindnames",
    "plinth.kindfacts",
    "plinth.cli.completion",
    "click.shell_completion",
    "shlex",
}


def test_get_and_a_completion_import_no_more_than_rest_get(tmp_path: Path) -> None:
    items = {"kind": "list", "itemKind": "domain", "items": [DOMAIN], "links": []}
    canned = {("GET", "/org/acme/domain"): Canned(200, dumps(items))}
    auth = ["--endpoint", "", "--token", "t"]
    with CannedServer(canned) as server:
        auth[1] = server.endpoint
        _, rest = run_probe(["rest", "get", "/org/acme/domain", "-o", "json", *auth], tmp_path)
        code, get = run_probe(["get", "domains", "--org", "acme", "-o", "json", *auth], tmp_path)
        words = ["plinth", "get", "domain", "--org", "acme", *auth, ""]
        request = {
            "_PLINTH_COMPLETE": "bash_complete",
            "COMP_WORDS": " ".join(words),
            "COMP_CWORD": str(len(words) - 1),
        }
        completed, completion = run_probe([], tmp_path, request)
    assert (code, completed) == (0, 0)
    assert "plinth.client.http" in get and "plinth.client.http" in completion  # both asked the server
    assert get - rest <= OWN_MODULES, sorted(get - rest - OWN_MODULES)
    assert completion - rest <= OWN_MODULES, sorted(completion - rest - OWN_MODULES)
