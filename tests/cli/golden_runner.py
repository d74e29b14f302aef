"""Run one golden case with the official CLI or with Plinth, and mask what legitimately varies.

Masked: the local time at the start of ``-v``/``--debug`` entries, the per-run session id,
the User-Agent (each CLI names itself), the canned server's port and the run's temp folder.
Nothing else: every other byte of stdout and stderr is compared.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.cli.canned_server import CannedServer
from tests.cli.golden_cases import Case
from tests.support import paths

GOLDEN_DIR = Path(__file__).parent / "golden"
CPLN_BIN = str(paths.CPLN_BIN)
TOKEN = "tok-secret-123"

_MASKS = [
    (re.compile(r"^\d{1,2}:\d{2}:\d{2}\s?[AP]M ", re.MULTILINE), "<TIME> "),
    (re.compile(r"(x-cpln-session: |Starting session )[0-9a-f-]{36}"), r"\1<SESSION>"),
    (re.compile(r"User-Agent: [^\n]*"), "User-Agent: <UA>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<PORT>"),
]


@dataclass
class Outcome:
    stdout: str
    stderr: str
    exit: int
    edit_file: str | None = None

    def to_json(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def mask(text: str, folder: str) -> str:
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text.replace(folder, "<DIR>")


def run_case(case: Case, tool: str) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="plinth-golden-") as folder, CannedServer(case.routes) as server:
        for name, content in case.files.items():
            Path(folder, name).write_text(content, encoding="utf-8")
        args = [arg.replace("{dir}", folder) for arg in case.args]
        args += ["--endpoint", server.endpoint, "--token", TOKEN]
        environ = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": folder,
            "TMPDIR": folder,
            "TZ": "UTC",
            "LANG": "C.UTF-8",
            **case.env,
        }
        capture = Path(folder, "captured-edit-file")
        if case.editor is not None:
            script = Path(folder, "editor.sh")
            script.write_text("#!/bin/sh\n" + case.editor, encoding="utf-8")
            script.chmod(0o755)
            environ.update({"EDITOR": str(script), "CAPTURE": str(capture)})
        if tool == "cpln":
            outcome = _run_cpln(args, environ, case.stdin, folder)
        else:
            outcome = _run_plinth(args, environ, case.stdin, folder)
        if capture.exists():
            outcome.edit_file = capture.read_text(encoding="utf-8")
        outcome.stdout = mask(outcome.stdout, folder)
        outcome.stderr = mask(outcome.stderr, folder)
        return outcome


def _run_cpln(args: list[str], environ: dict[str, str], stdin: str, folder: str) -> Outcome:
    environ = {**environ, "CPLN_SKIP_UPDATE_CHECK": "1", "CPLN_HOME": str(Path(folder, "cpln-home"))}
    done = subprocess.run(
        [CPLN_BIN, "rest", *args], input=stdin, capture_output=True, text=True, env=environ, timeout=60, check=False
    )
    return Outcome(done.stdout, done.stderr, done.returncode)


def _run_plinth(args: list[str], environ: dict[str, str], stdin: str, folder: str) -> Outcome:
    from plinth.cli.env import CliEnv
    from plinth.cli.main import run

    environ = {**environ, "PLINTH_HOME": str(Path(folder, "plinth-home"))}
    stdout, stderr = io.StringIO(), io.StringIO()
    env = CliEnv(
        stdin=io.StringIO(stdin),
        stdout=stdout,
        stderr=stderr,
        environ=environ,
        config_dir=Path(environ["PLINTH_HOME"]),
        sleep=lambda seconds: None,
    )
    code = run(["rest", *args], env)
    return Outcome(stdout.getvalue(), stderr.getvalue(), code)


def golden_path(case: Case) -> Path:
    return GOLDEN_DIR / f"{case.name}.json"


def load_golden(case: Case) -> Outcome:
    data = json.loads(golden_path(case).read_text(encoding="utf-8"))
    return Outcome(data["stdout"], data["stderr"], data["exit"], data.get("edit_file"))


def save_golden(case: Case, outcome: Outcome) -> None:
    data = {"source": case.source, "args": list(case.args), **outcome.to_json()}
    golden_path(case).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
