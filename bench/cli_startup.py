"""Wall time of ``plinth rest get`` of one domain (and of ``cpln rest get`` when installed), of
``plinth get domain NAME`` and of one completion request (``plinth get domain <TAB>``, names
live from the server: the cache is off, so every run asks).

Starts a real ``plinth serve`` on loopback, creates one domain, then runs each command 20
times and prints the medians and their ratios to ``cpln rest get`` (issue 4 asks for at most a
quarter of the official CLI's; issue 13 for ``plinth get`` and completion to start as fast).
Run: ``PYTHONPATH=src:. python -m bench.cli_startup``; ``make bench`` can call ``main``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 20
CPLN = os.environ.get("CPLN_BIN", str(Path(__file__).resolve().parents[1] / ".cache/cpln/node_modules/.bin/cpln"))


def median_wall_ms(command: list[str], environ: dict[str, str]) -> float:
    samples = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environ, check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> int:
    from tests.support.server import start_server

    with tempfile.TemporaryDirectory() as folder:
        server = start_server(Path(folder) / "data", org="acme")
        try:
            path = "/org/acme/domain/bench.example.com"
            base = {"PATH": os.environ.get("PATH", ""), "HOME": folder, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
            args = ["rest", "get", path, "--endpoint", server.url, "--token", server.key, "-o", "json"]
            plinth = [sys.executable, "-m", "plinth"]
            create = [*plinth, "rest", "create", "/org/acme/domain", "-f", "-", *args[3:7]]
            subprocess.run(
                create, input="name: bench.example.com\n", text=True, env=base, check=True, stdout=subprocess.DEVNULL
            )
            ours_env = {**base, "PLINTH_HOME": folder}
            ours = median_wall_ms([*plinth, *args], ours_env)
            typed = ["get", "domain", "bench.example.com", "--org", "acme", *args[3:]]
            get = median_wall_ms([*plinth, *typed], ours_env)
            words = ["plinth", "get", "domain", *args[3:7], "--org", "acme", ""]
            asking = {"_PLINTH_COMPLETE": "bash_complete", "COMP_WORDS": " ".join(words), "PLINTH_COMPLETION_TTL": "0"}
            completion = median_wall_ms(plinth, {**ours_env, **asking, "COMP_CWORD": str(len(words) - 1)})
            theirs = None
            if shutil.which(CPLN) or Path(CPLN).exists():
                theirs = median_wall_ms([CPLN, *args], {**base, "CPLN_SKIP_UPDATE_CHECK": "1", "CPLN_HOME": folder})
                print(f"cpln rest get:        median {theirs:.0f} ms over {RUNS} runs")
            for name, value in (("plinth rest get", ours), ("plinth get", get), ("completion (names)", completion)):
                versus = f"; ratio to cpln rest get {value / theirs:.2f}" if theirs else ""
                print(f"{name + ':':<21} median {value:.0f} ms over {RUNS} runs{versus}")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
