"""A timeline of one ``plinth apply --ready`` of ``bench.runtime_apply``'s stack, end to end:
``python -m bench.runtime_apply_trace``. What docs/runtime.md's "Where apply --ready's time
goes" tables were read from.

It runs the served side of ``bench.runtime_apply`` once (a real ``plinth serve --runtime
containers``, the same stack, the same clean-up) and prints, in milliseconds from the start of
the CLI, one line per:

- podman command the server's controller ran (a shim first on ``PATH`` times each: its start,
  what it was, how long it took; the shim's own ``date`` calls add a few ms to each);
- engine event of the run's containers (``podman events``: when this process read it);
- change of a workload's ``status.ready`` (polled every 10 ms), line the CLI printed, its exit,
  and the first 200 through the gateway (polled every 10 ms).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

from bench import runtime_apply as stage
from bench.procs import free_port
from bench.runtime_stage import engine_config, until
from tests.support import containers
from tests.support.server import start_server

SHIM = """#!/bin/bash
s=$(date +%s.%N)
{podman} "$@"
rc=$?
echo "$s $(date +%s.%N) $1 $2" >> {log}
exit $rc
"""


class Timeline:
    def __init__(self) -> None:
        self.marks: list[tuple[float, str]] = []
        self.lock = threading.Lock()

    def mark(self, what: str, at: float | None = None) -> None:
        with self.lock:
            self.marks.append((time.time() if at is None else at, what))


def _events(label: str, line: Timeline) -> subprocess.Popen[str]:
    argv = ["podman", "events", "--format", "json", "--filter", f"label={label}"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)

    def read() -> None:
        assert proc.stdout is not None
        for text in proc.stdout:
            try:
                doc = json.loads(text)
            except ValueError:
                continue
            if str(doc.get("Name", "")).startswith("plinth_"):  # the controller's, not the stage's smoke run
                line.mark(f"event {doc.get('Status')} {str(doc.get('Name', ''))[-40:]}")

    threading.Thread(target=read, daemon=True).start()
    return proc


def _statuses(url: str, key: str, org: str, line: Timeline, stop: threading.Event) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=5) as client:
        seen: dict[str, object] = {}
        while not stop.is_set():
            for name in stage.WORKLOADS:
                try:
                    response = client.get(f"/org/{org}/gvc/main/workload/{name}")
                    ready = (response.json().get("status") or {}).get("ready") if response.status_code == 200 else None
                except (httpx.HTTPError, ValueError):
                    ready = None
                if seen.get(name, "") != ready:
                    seen[name] = ready
                    line.mark(f"status {name} ready={ready}")
            time.sleep(0.01)


def trace(work: Path, image: str, run_id: str) -> Timeline:
    line = Timeline()
    calls = work / "podman-calls.log"
    shim_dir = work / "shim"
    shim_dir.mkdir()
    podman = subprocess.run(["which", "podman"], capture_output=True, text=True, check=True).stdout.strip()
    (shim_dir / "podman").write_text(SHIM.format(podman=podman, log=calls))
    (shim_dir / "podman").chmod(0o755)
    org = f"a{uuid.uuid4().hex[:10]}"
    listen = f"127.0.0.1:{free_port()}"
    label = f"{containers.TEST_RUN}={run_id}"
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{shim_dir}:{path}"  # the server's controller inherits it
    try:
        args = ("--runtime", "containers", "--gateway-listen", listen, "--container-label", label)
        server = start_server(work / "data", org=org, extra_args=args)
    finally:
        os.environ["PATH"] = path
    events = _events(label, line)
    stop = threading.Event()
    try:
        manifest = work / "stack.json"
        manifest.write_text(json.dumps({"kind": "list", "items": stage.stack(image)}))
        command = [sys.executable, "-m", "plinth", "apply", "-f", str(manifest), "--org", org, "--ready"]
        command += ["--endpoint", server.url, "--token", server.key]
        env = {**os.environ, "PLINTH_HOME": str(work / "home")}
        until(lambda: stage.answers(f"http://{listen}/"), f"the gateway on {listen}", 60, 0.1)
        time.sleep(1.5)  # the controller's start-up commands are over
        calls.write_text("")
        threading.Thread(target=_statuses, args=(server.url, server.key, org, line, stop), daemon=True).start()
        line.mark("apply starts")
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert proc.stdout is not None
        for text in proc.stdout:
            line.mark(f"apply: {text.strip()}")
        line.mark(f"apply exits ({proc.wait()})")
        until(lambda: stage.first_200(f"http://{listen}/", stage.DOMAIN), "the first 200", 120, 0.01)
        line.mark("first 200 through the gateway")
    finally:
        stop.set()
        server.stop()
        events.kill()
        events.wait()
        stage._remove(f"plinth.org={org}")
    for text in calls.read_text().splitlines():
        began, ended, *what = text.split()
        line.mark(f"podman {' '.join(what)} [{(float(ended) - float(began)) * 1000:.0f} ms]", float(began))
    return line


def main() -> int:
    missing = stage.applier()[0] is None
    if missing:
        print("skipped: this Plinth has no 'plinth apply --ready' with '--runtime containers'")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-apply-trace-") as scratch:
        work = Path(scratch)
        with engine_config(work) as (image, run_id):
            line = trace(work, image, run_id)
    start = next(at for at, what in line.marks if what == "apply starts")
    for at, what in sorted(line.marks):
        if at >= start:
            print(f"{(at - start) * 1000:8.0f}  {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
