"""Starting Plinth (``plinth serve``, as users run it) and the ceiling on 127.0.0.1."""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench import ceiling
from bench.procs import Processes, free_port, wait_for_port, worker_pids
from bench.stores import Store

REPO_ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 60.0


@dataclass
class Running:
    proc: subprocess.Popen[bytes]
    port: int
    stderr_path: Path
    #: The PostgreSQL database it serves from, so its backends' CPU counts as the server's.
    database: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def workers(self) -> list[int]:
        return worker_pids(self.proc.pid)


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment without ``PLINTH_*`` (flags say everything), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    env.update(extra or {})
    return env


def _start(
    procs: Processes, argv: list[str], port: int, workers: int, logs: Path, name: str, env: dict[str, str]
) -> Running:
    out_path, err_path = logs / f"{name}.out", logs / f"{name}.err"
    with open(out_path, "ab") as out, open(err_path, "ab") as err:
        proc = procs.start(argv, env=env, cwd=REPO_ROOT, stdout=out, stderr=err)
    running = Running(proc, port, err_path)
    try:
        wait_for_port(port, proc, START_TIMEOUT_S)
        _wait_for_workers(running, workers)
    except Exception as exc:
        tail = err_path.read_text(errors="replace")[-2000:]
        procs.stop(proc)
        raise RuntimeError(f"{name} did not start: {exc}\n{tail}") from exc
    return running


def _wait_for_workers(running: Running, workers: int) -> None:
    """Every worker spawned and one of them answering (uvicorn queues connections in the backlog)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if len(running.workers()) >= workers:
            try:
                if httpx.get(running.url + "/healthz", timeout=5).status_code < 500:
                    return
            except httpx.HTTPError:
                pass
        time.sleep(0.1)
    raise TimeoutError(f"{workers} worker(s) did not come up within {START_TIMEOUT_S:.0f} s")


def secrets_key_file(store: Store) -> Path:
    """The secrets key every server of a PostgreSQL store shares (a PostgreSQL server refuses to
    start without one; a SQLite one makes its own in the data dir). Made once, mode 0600."""
    path = store.data_dir / "bench-secrets.key"
    if not path.exists():
        store.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(base64.b64encode(secrets.token_bytes(32)).decode() + "\n")
    return path


def start_plinth(
    procs: Processes,
    store: Store,
    workers: int,
    org: str,
    access_log: bool,
    logs: Path,
    name: str,
    extra_args: tuple[str, ...] = (),
) -> Running:
    """``python -m plinth serve`` (with ``extra_args``); its stderr (the JSON access log, when
    on) goes to a file."""
    port = free_port()
    argv = [sys.executable, "-m", "plinth", "serve", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--data-dir", str(store.data_dir), "--org", org, "--workers", str(workers)]
    argv += ["--access-log" if access_log else "--no-access-log"]
    # The limiter stays on (its cost is part of every request) but never throttles the load.
    argv += ["--rate-limit", "1000000", "--rate-burst", "1000000"]
    if store.database_url:
        argv += ["--database-url", store.database_url, "--secrets-key-file", str(secrets_key_file(store))]
    argv += list(extra_args)
    running = _start(procs, argv, port, workers, logs, name, child_env())
    running.database = store.database_name
    return running


def start_ceiling(procs: Processes, response_file: Path, workers: int, logs: Path, name: str) -> Running:
    """The bare app on uvicorn with the settings ``plinth serve`` passes to ``uvicorn.run``."""
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "bench.ceiling:create_app", "--factory"]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    argv += ["--loop", "uvloop", "--http", "httptools", "--no-access-log", "--no-server-header"]
    argv += ["--log-level", "warning"]
    env = child_env({ceiling.ENV: str(response_file)})
    return _start(procs, argv, port, workers, logs, name, env)


def admin_key(store: Store) -> str:
    return (store.data_dir / "bootstrap-admin.key").read_text().strip()
