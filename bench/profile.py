"""Where GET one item spends its time: py-spy samples a one-worker Plinth under wrk load.

``python -m bench.profile [--backend sqlite] [--seconds 10]`` prints the hottest lines (self
time, file:line) and functions (inclusive time). It needs py-spy (``pip install py-spy``
into the same environment) and ptrace rights (root, or ``kernel.yama.ptrace_scope=0``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench.items import ItemKind
from bench.loadgen import Load, RequestPlan, ensure_wrk, lua_script
from bench.options import parse as parse_bench_options
from bench.procs import Processes
from bench.scenario import Run, setup_store
from bench.seed import seed
from bench.servers import admin_key, start_plinth
from bench.stores import BACKENDS, scratch_store, unavailable_reason

FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def short(path: str) -> str:
    """``src/plinth/server/app.py`` rather than the absolute path; stdlib and packages by their tail."""
    for marker in ("/src/", "/site-packages/", "/lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def aggregate(raw: str) -> tuple[int, Counter[str], Counter[str]]:
    """From py-spy's raw (collapsed) output: total samples, self samples by ``file:line``
    of the innermost frame, and inclusive samples by function (each counted once a stack).

    Only the event loop's thread counts: under GET load SQLite's writer thread just waits on
    its queue, which py-spy cannot tell from work (the wait releases the GIL)."""
    total = 0
    self_time: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        if "(threading.py" in stack:
            continue
        total += count
        frames = [FRAME.match(f) for f in stack.split(";")]
        names = []
        for m in frames:
            if m is None:
                continue
            names.append(f"{m['func']} ({short(m['file'])})")
        last = frames[-1]
        if last is not None:
            self_time[f"{short(last['file'])}:{last['line'] or '?'} {last['func']}"] += count
        for name in set(names):
            inclusive[name] += count
    return total, self_time, inclusive


def _table(title: str, counts: Counter[str], total: int, top: int) -> str:
    lines = [title]
    for name, n in counts.most_common(top):
        lines.append(f"  {100 * n / total:5.1f}%  {name}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    p.add_argument("--backend", choices=BACKENDS, default="sqlite")
    p.add_argument("--seconds", type=int, default=10)
    p.add_argument("--rate", type=int, default=500, help="samples per second")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--no-access-log", dest="access_log", action="store_false")
    p.add_argument("--raw", type=Path, help="also keep py-spy's raw output here")
    a = p.parse_args(argv)
    pyspy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(pyspy).exists():
        raise SystemExit("py-spy is not installed: pip install py-spy (into this Python's environment)")
    reason = unavailable_reason(a.backend, parse_bench_options([]).pg_admin_url)
    if reason:
        raise SystemExit(f"{a.backend}: {reason}")
    opts = parse_bench_options(["--backend", a.backend, "--workers", "1", "--items", "1000"])
    wrk = ensure_wrk()
    workdir = Path(tempfile.mkdtemp(prefix="plinth-profile-"))
    try:
        with Processes() as procs, scratch_store(a.backend, workdir, opts.pg_admin_url) as store:
            run = Run(opts, wrk, procs, workdir)
            setup_store(run, store)
            seed(store, opts.org, ItemKind(opts.kind), 0, 1000)
            server = start_plinth(procs, store, 1, opts.org, a.access_log, workdir, "profiled")
            plan = RequestPlan("GET", ItemKind(opts.kind).item_path(opts.org, 0))
            script = workdir / "get.lua"
            script.write_text(lua_script(plan, {"Authorization": f"Bearer {admin_key(store)}"}, "profile"))
            load = Load(duration_s=a.seconds + 3)
            argv_wrk = [wrk, f"-t{load.threads}", f"-c{load.connections}", f"-d{load.duration_s}s", "-s", str(script)]
            with open(workdir / "wrk.out", "wb") as out:
                loader = procs.start([*argv_wrk, server.url + plan.path], env={}, cwd=workdir, stdout=out, stderr=out)
                raw_path = workdir / "pyspy.raw"
                record = [pyspy, "record", "-p", str(server.proc.pid), "-d", str(a.seconds), "-r", str(a.rate)]
                subprocess.run(
                    [*record, "-f", "raw", "-o", str(raw_path)],
                    check=True,
                    capture_output=True,
                    timeout=a.seconds + 60,
                )
                procs.stop(loader)
            raw = raw_path.read_text()
            if a.raw:
                a.raw.write_text(raw)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    total, self_time, inclusive = aggregate(raw)
    print(
        f"GET one {opts.kind} on {a.backend}, 1 worker, access log {'on' if a.access_log else 'off'}: {total} samples"
    )
    print(_table("Self time by line:", self_time, total, a.top))
    print(_table("Inclusive time by function:", inclusive, total, a.top))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
