"""Wall time of applying one 50-document stack: ``plinth apply -f`` against ``cpln apply --file``.

The stack (:func:`stack_documents`) is what a team keeps in files: one GVC, 8 identities,
8 secrets, 6 volume sets, 12 workloads (``bench.workload_spec``'s realistic spec, each with
its identity, two secrets and a volume set), 5 domains routing to workloads and 10 policies
granting identities ``reveal`` on secrets. Each CLI applies it to a fresh server of its own
(SQLite, one worker), then re-applies the unchanged stack (median of :data:`REAPPLIES` runs).

Printed: both wall times and the ratio plinth / cpln for the first apply (the issue's target:
at most 0.2) and for the re-apply, and, as the floor any client pays, the same 50 PUTs sent
one after the other over one kept-alive connection from this process (no CLI start-up, no
file parsing): where the first apply's time goes is mostly the server's creating the items.
The official CLI is the ceiling measured in the same run;
without it (no node/npm, see ``tests/compat``) only Plinth's figures are printed.

For the first apply, also when its lines appeared (ms from the start): the first line and the
median line. ``plinth apply`` prints each line as its answer comes; ``--ordered`` holds the lines
back to the plan's order (what every ``plinth apply`` printed before it streamed), so the two rows
show what streaming changes for someone watching the output; ``cpln apply`` writes one document
after the other, so its lines come as they are written. Those times move with the machine's
load as much as with the order, so :func:`held_back` also measures the one thing the order
changes, in this process with ``plinth apply``'s own runner (``cli/batch.py``): how long each
answer waits between arriving and being handed out to be printed (p50, p90 and max).
``--large`` applies ``bench.stack``'s 1,000-document stack instead of the 50 documents.
Run: ``PYTHONPATH=src:. python -m bench.apply [--large]``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import stack
from bench.verdict import Target, mark, ratio

ORG = "acme"
GVC = "shop"
REAPPLIES = 3
TARGET = Target("<=", 0.2)
CPLN = os.environ.get("CPLN_BIN", str(Path(__file__).resolve().parents[1] / ".cache/cpln/node_modules/.bin/cpln"))


def stack_documents() -> list[dict[str, Any]]:
    """The 50 documents, written kind by kind (the CLIs order them)."""
    docs = stack.stack_documents(GVC, secrets=8, identities=8, volumes=6, workloads=12, domains=5, policies=10)
    assert len(docs) == 50
    return docs


def wall_s(command: list[str], environ: dict[str, str]) -> tuple[float, str]:
    """Seconds the command took, and its standard output; raise if it failed."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=environ, timeout=600, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])}... failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return took, done.stdout


@dataclass(frozen=True)
class Applied:
    """One CLI's figures, in seconds: the first apply's wall time and when its first and median
    lines appeared, and the median re-apply."""

    first: float
    first_line: float
    median_line: float
    again: float


def line_times(command: list[str], environ: dict[str, str]) -> tuple[float, list[float]]:
    """Seconds the command took, and when each line of its standard output appeared (seconds
    from its start); raise if it failed."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ)
    assert process.stdout is not None
    times = [time.perf_counter() - started for _ in iter(process.stdout.readline, "")]
    _, errors = process.communicate(timeout=600)
    took = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])}... failed ({process.returncode}):\n{errors}")
    return took, times


def measure(make_command: Callable[[str, str], list[str]], environ: dict[str, str], folder: Path) -> Applied:
    """First apply to a fresh server (with its lines' times), then the median re-apply of the
    unchanged stack."""
    from tests.support.server import start_server

    server = start_server(folder / "data", org=ORG)
    try:
        command = make_command(server.url, server.key)
        first, lines = line_times(command, environ)
        again = statistics.median(wall_s(command, environ)[0] for _ in range(REAPPLIES))
        return Applied(first, lines[0] if lines else first, statistics.median(lines) if lines else first, again)
    finally:
        server.stop()


def held_back(manifest: Path, folder: Path, ordered: bool) -> list[float]:
    """Seconds each answer waited between arriving and being handed out by ``run_plan`` (the
    first apply of the stack to a fresh server, 32 in flight as ``plinth apply``'s default)."""
    from plinth.cli.apply_run import apply_one
    from plinth.cli.batch import run_plan
    from plinth.cli.manifests import Placement, read_documents
    from plinth.cli.plan import plan
    from plinth.client import ApiClient
    from tests.support.server import start_server

    steps = plan(read_documents((str(manifest),), sys.stdin, Placement(ORG, None, None)))
    put = apply_one(dry_run=False)
    arrived: dict[str, float] = {}

    def action(client: ApiClient, document: Any) -> str:
        outcome = put(client, document)
        arrived[document.href] = time.perf_counter()
        return outcome

    server = start_server(folder / "data", org=ORG)
    try:
        waits = []
        for n, result in run_plan(steps, action, lambda: ApiClient(server.url, server.key), 32, False, ordered):
            if isinstance(result, BaseException):
                raise RuntimeError(f"{steps[n].document.label}: {result}")
            waits.append(time.perf_counter() - arrived[steps[n].document.href])
        return waits
    finally:
        server.stop()


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    at = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 for q in (0.5, 0.9)]
    return f"p50 {at[0]:6.1f} ms   p90 {at[1]:6.1f} ms   max {ordered[-1] * 1000:6.1f} ms"


def bare_puts(docs: list[dict[str, Any]], folder: Path) -> tuple[float, float]:
    """The floor: the stack PUT in file order over one connection, to a fresh server, then again."""
    import http.client

    from tests.support.server import start_server

    server = start_server(folder / "data", org=ORG)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]))
        headers = {"Authorization": f"Bearer {server.key}", "Content-Type": "application/json"}
        order = sorted(docs, key=lambda d: BARE_ORDER.index(d["kind"]))
        times = []
        for _ in range(2):
            started = time.perf_counter()
            for doc in order:
                parent = f"gvc/{doc['gvc']}/" if doc.get("gvc") else ""
                connection.request("PUT", f"/org/{ORG}/{parent}{doc['kind']}", json.dumps(doc), headers)
                answer = connection.getresponse()
                answer.read()
                if answer.status >= 300:
                    raise RuntimeError(f"PUT {doc['kind']} {doc['name']}: {answer.status}")
            times.append(time.perf_counter() - started)
        connection.close()
        return times[0], times[1]
    finally:
        server.stop()


#: Only for the floor's sequential PUTs (the CLIs find their own order).
BARE_ORDER = ("gvc", "identity", "secret", "volumeset", "workload", "domain", "policy")


def main(argv: list[str] | None = None) -> int:
    large = "--large" in (sys.argv[1:] if argv is None else argv)
    docs = stack.large_stack(GVC) if large else stack_documents()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        manifest = folder / "stack.json"  # JSON is YAML: both CLIs read it, several documents as a list
        manifest.write_text(json.dumps({"kind": "list", "items": docs}))
        base = {"PATH": os.environ.get("PATH", ""), "HOME": scratch, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}

        def plinth(*extra: str) -> Callable[[str, str], list[str]]:
            apply = [sys.executable, "-m", "plinth", "apply", "-f", str(manifest), "--org", ORG, *extra]
            return lambda url, key: [*apply, "--endpoint", url, "--token", key]

        plinth_env = {**base, "PLINTH_HOME": str(folder / "plinth-home")}
        ours = measure(plinth(), plinth_env, folder / "p")
        rows = [("plinth apply -f", ours), ("  --ordered", measure(plinth("--ordered"), plinth_env, folder / "o"))]
        floor = bare_puts(docs, folder / "b")
        waits = {name: held_back(manifest, folder / f"w{name}", name == "ordered") for name in ("streamed", "ordered")}
        theirs = None
        if Path(CPLN).exists():
            cpln_env = {**base, "CPLN_SKIP_UPDATE_CHECK": "1", "CPLN_HOME": str(folder / "cpln-home")}

            def cpln(url: str, key: str) -> list[str]:
                return [CPLN, "apply", "--file", str(manifest), "--org", ORG, "--endpoint", url, "--token", key]

            theirs = measure(cpln, cpln_env, folder / "c")
            rows.append(("cpln apply --file", theirs))
        kinds = "gvc, identities, secrets, volume sets, workloads, domains, policies"
        print(f"Apply a {len(docs)}-document stack ({kinds})")
        for name, row in rows:
            print(
                f"  {name:<18} first {row.first * 1000:7.0f} ms (lines: first {row.first_line * 1000:6.0f} ms,"
                f" median {row.median_line * 1000:6.0f} ms)   re-apply {row.again * 1000:7.0f} ms"
            )
        print(f"  {'bare PUTs (floor)':<18} first {floor[0] * 1000:7.0f} ms   re-apply {floor[1] * 1000:7.0f} ms")
        print("  How long an answer waits to be printed once it has arrived (first apply, 32 in flight):")
        for name, values in waits.items():
            print(f"    {name:<16} {_quantiles(values)}")
        if theirs is None:
            print(f"  cpln not installed at {CPLN}: no ratio (the compat tests install it)")
            return 0
        first_ratio, again_ratio = ratio(ours.first, theirs.first), ratio(ours.again, theirs.again)
        print(f"  ratio plinth/cpln: first {first_ratio:.2f} {mark(first_ratio, TARGET)} (target {TARGET.describe()})")
        print(f"  ratio plinth/cpln: re-apply {again_ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
