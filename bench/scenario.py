"""The order of a run: per backend, a fresh store; the main table with few items stored, for
each worker count (ceiling first, then Plinth's figures); then the scale figures and memory
with many items stored. Prints as it goes and writes the JSON at the end (also when stopped)."""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bench import client, cpu, machine, report
from bench.ceiling import write_response
from bench.items import ItemKind
from bench.loadgen import Load, RequestPlan, WrkResult, ensure_wrk, run_wrk
from bench.options import Options, parse
from bench.procs import Processes, rss_mb
from bench.seed import seed
from bench.servers import Running, admin_key, start_ceiling, start_plinth
from bench.stores import Store, scratch_store, unavailable_reason
from bench.verdict import CEILING_TARGETS, MEMORY_TARGET, SCALE_TARGET

PAGE = 50
#: PATCH goes to items 1..PATCH_SPREAD in turn (item 0 is the GET target and stays unchanged).
PATCH_SPREAD = 50


@dataclass
class Run:
    """What every phase needs: the options, the wrk binary, the processes, the work directory."""

    opts: Options
    wrk: str
    procs: Processes
    workdir: Path
    settle: cpu.Settle = field(default_factory=lambda: cpu.Settle(0.0))

    @property
    def kind(self) -> ItemKind:
        return ItemKind(self.opts.kind)

    def say(self, text: str) -> None:
        print(text, flush=True)


@dataclass
class Plans:
    get: RequestPlan
    first_page: RequestPlan
    post: RequestPlan
    patch: RequestPlan


def plans(run: Run) -> Plans:
    org, kind = run.opts.org, run.kind
    return Plans(
        get=RequestPlan("GET", kind.item_path(org, 0)),
        first_page=RequestPlan("GET", f"{kind.collection_path(org)}?limit={PAGE}"),
        # Unique names per request (run token, wrk thread, counter): every POST creates.
        post=RequestPlan("POST", f"/org/{org}/gvc/main/volumeset", '{"name":"vs-', '","spec":{"initialCapacity":10}}'),
        # A new description each time, so every PATCH is a real write (an unchanged item is not
        # rewritten), over PATCH_SPREAD items in turn: clients patching one item concurrently
        # measure the engine's compare-and-swap retries, not write throughput.
        patch=RequestPlan(
            "PATCH",
            kind.item_path(org, 1),
            '{"description":"bench ',
            '"}',
            tuple(kind.item_path(org, i) for i in range(1, 1 + PATCH_SPREAD)),
        ),
    )


#: Measured runs of a figure, at most, while its connections keep landing on one worker.
LOPSIDED_ATTEMPTS = 3


def measure(run: Run, server: Running, key: str | None, plan: RequestPlan, label: str) -> WrkResult:
    """A warm-up (discarded), then the measured run; measured again (each wrk run connects
    anew) when the load left a worker idle (``cpu.lopsided``)."""
    headers = {"Content-Type": "application/json"} if plan.body_prefix is not None else {}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    warm = Load(run.opts.load.threads, run.opts.load.connections, run.opts.warmup_s, run.opts.load.timeout_s)
    run_wrk(run.wrk, server.url, plan, headers, warm, run.workdir)
    workers = server.workers()
    flag = ""
    for attempt in range(1, LOPSIDED_ATTEMPTS + 1):
        run.settle.wait(server.proc.pid, server.database)
        before = cpu.snapshot(server.proc.pid, server.database)
        ticks = {pid: cpu.process_ticks(pid) for pid in workers}
        result = run_wrk(run.wrk, server.url, plan, headers, run.opts.load, run.workdir)
        result = replace(result, other_cores=cpu.other_cores(before, cpu.snapshot(server.proc.pid, server.database)))
        if not cpu.lopsided(ticks, {pid: cpu.process_ticks(pid) for pid in workers}):
            break
        flag = f"  (run {attempt} had one worker idle: measured again)"
        if attempt == LOPSIDED_ATTEMPTS:
            flag = f"  (one worker idle in all {attempt} runs)"
    flag += f"  (errors: {report.errors_cell(result)})" if result.errors else ""
    for code, body in result.samples.items():
        flag += f"\n      first {code}: {body[:200]}"
    shown = f"{result.rps:>9,.0f} req/s  p50 {result.p50_ms:6.2f} ms  p99 {result.p99_ms:6.2f} ms"
    shown += f"  other CPU {result.other_cores:.2f}"
    run.say(f"    {label:<24} {shown}{flag}")
    return result


def memory(server: Running) -> dict[int, float | None]:
    return {pid: rss_mb(pid) for pid in server.workers()}


def walk(run: Run, api: Any, first: str, page: int) -> RequestPlan | None:
    """The deep page's request, or ``None`` (said why) when following links took too long."""
    began = time.monotonic()
    try:
        url = client.page_url(api, first, page, run.opts.walk_deadline_s)
    except client.WalkTooSlow as exc:
        run.say(f"    deep page skipped: following next links {exc}")
        return None
    run.say(f"    (followed next links to page {page} in {time.monotonic() - began:.1f} s)")
    return RequestPlan("GET", url)


def deep_page_number(run: Run, stored: int) -> int:
    """The deepest page up to ``--deep-page`` that the stored items fill."""
    return max(1, min(run.opts.deep_page, stored // PAGE))


def setup_store(run: Run, store: Store) -> str:
    """First start bootstraps the org and the admin key; the GVC the volume sets live in."""
    server = start_plinth(run.procs, store, 1, run.opts.org, run.opts.access_log, run.workdir, f"{store.backend}-setup")
    try:
        key = admin_key(store)
        with client.client(server.url, key) as api:
            client.ensure_created(api, f"/org/{run.opts.org}/gvc", {"name": "main", "spec": {}})
    finally:
        run.procs.stop(server.proc)
    return key


def read_figures(
    run: Run, server: Running, key: str, p: Plans, deep: RequestPlan | None, deep_no: int
) -> dict[str, WrkResult]:
    """GET one item, the first list page and (when the walk reached it) the deep one: the
    figures both the main table and the scale table have."""
    figures = {
        "get": measure(run, server, key, p.get, f"GET {run.kind.name}"),
        "list": measure(run, server, key, p.first_page, f"GET list page {PAGE}"),
    }
    if deep is not None:
        figures["deep"] = measure(run, server, key, deep, f"GET list page {deep_no}")
    return figures


def small_phase(run: Run, store: Store, key: str, workers: int) -> dict[str, Any]:
    """The main table with ``--small`` items stored: ceiling, then Plinth's five figures."""
    p = plans(run)
    name = f"{store.backend}-w{workers}-small"
    server = start_plinth(run.procs, store, workers, run.opts.org, run.opts.access_log, run.workdir, name)
    try:
        with client.client(server.url, key) as api:
            recorded = client.record(api, p.get.path)
            deep_no = deep_page_number(run, run.opts.small)
            deep = walk(run, api, p.first_page.path, deep_no)
        response_file = run.workdir / f"ceiling-{name}.json"
        write_response(response_file, recorded.status, recorded.headers, recorded.body)
        ceiling_server = start_ceiling(run.procs, response_file, workers, run.workdir, f"ceiling-{name}")
        try:
            ceiling = measure(run, ceiling_server, None, p.get, "ceiling (bare ASGI)")
        finally:
            run.procs.stop(ceiling_server.proc)
        results = {
            **read_figures(run, server, key, p, deep, deep_no),
            "post": measure(run, server, key, p.post, "POST volumeset"),
            "patch": measure(run, server, key, p.patch, f"PATCH {run.kind.name}"),
        }
        rss = memory(server)
    finally:
        run.procs.stop(server.proc)
    return {"ceiling": ceiling, "results": results, "deep_page": deep_no, "rss": rss, "bytes": len(recorded.body)}


def large_phase(run: Run, store: Store, key: str, workers: int) -> dict[str, Any]:
    """GET one item, the first and the deep list page with ``--items`` stored; RSS after."""
    p = plans(run)
    name = f"{store.backend}-w{workers}-large"
    server = start_plinth(run.procs, store, workers, run.opts.org, run.opts.access_log, run.workdir, name)
    try:
        with client.client(server.url, key) as api:
            deep_no = deep_page_number(run, run.opts.large)
            deep = walk(run, api, p.first_page.path, deep_no)
        results = read_figures(run, server, key, p, deep, deep_no)
        rss = memory(server)
    finally:
        run.procs.stop(server.proc)
    return {"results": results, "deep_page": deep_no, "rss": rss}


def main_table(run: Run, store: Store, workers: int, small: dict[str, Any]) -> str:
    targets = CEILING_TARGETS.get(store.backend, {})
    res = small["results"]
    k = run.kind.name
    figures = [
        report.Figure(f"GET {k}", res["get"], targets.get("get")),
        report.Figure(f"GET list page {PAGE}", res["list"], targets.get("list")),
        report.Figure("POST volumeset", res["post"], targets.get("post")),
        report.Figure(f"PATCH {k}", res["patch"], targets.get("patch")),
    ]
    log = "on (stderr to a file)" if run.opts.access_log else "off"
    title = (
        f"{store.label}, {workers} worker(s), {run.opts.small:,} {k}s stored: {run.opts.load.describe()} on 127.0.0.1 "
        f"(wrk and the server share the cores); Plinth access log {log}; response {small['bytes']} bytes"
    )
    rows = report.throughput_rows(figures, small["ceiling"])
    return title + "\n" + report.format_table(report.THROUGHPUT_HEADER, rows)


def scale_table(run: Run, store: Store, workers: int, small: dict[str, Any], large: dict[str, Any]) -> str:
    s, lg = small["results"], large["results"]
    k = run.kind.name
    figures = [
        report.ScaleFigure(f"GET {k}", s["get"], lg["get"], SCALE_TARGET),
        report.ScaleFigure("GET list page 1", s["list"], lg["list"], SCALE_TARGET),
    ]
    note = ""
    if "deep" in s and "deep" in lg:
        label = f"GET deep page ({small['deep_page']} / {large['deep_page']})"
        figures.append(report.ScaleFigure(label, s["deep"], lg["deep"], SCALE_TARGET))
    else:
        limit = run.opts.walk_deadline_s
        note = f"\nGET deep page: MISS (following next links to it took over {limit:.0f} s; not measured)"
    title = f"Scale, {store.label}, {workers} worker(s): {run.opts.small:,} vs {run.opts.large:,} {k}s stored"
    header = report.scale_header(run.opts.small, run.opts.large)
    mem_title = f"Memory, {store.label}, {workers} worker(s), {run.opts.large:,} {k}s stored, after the load"
    mem = report.format_table(report.MEMORY_HEADER, report.memory_rows(large["rss"], MEMORY_TARGET))
    return f"{title}\n{report.format_table(header, report.scale_rows(figures))}{note}\n\n{mem_title}\n{mem}"


def phase_doc(phase: dict[str, Any]) -> dict[str, Any]:
    doc = {k: v for k, v in phase.items() if k not in ("ceiling", "results", "rss")}
    doc["results"] = {name: report.result_doc(r) for name, r in phase["results"].items()}
    if "ceiling" in phase:
        doc["ceiling"] = report.result_doc(phase["ceiling"])
    doc["rss_mb"] = {str(pid): mb for pid, mb in phase["rss"].items()}
    return doc


def run_backend(run: Run, store: Store, doc: dict[str, Any]) -> list[str]:
    opts = run.opts
    tables: list[str] = []
    run.say(f"\n== {store.label}: bootstrap, then {opts.small:,} {run.kind.name}s through the engine")
    key = setup_store(run, store)
    run.say(f"  seeded {opts.small:,} in {seed(store, opts.org, run.kind, 0, opts.small):.1f} s")
    smalls: dict[int, dict[str, Any]] = {}
    for workers in opts.workers:
        run.say(f"  {store.label}, {workers} worker(s), {opts.small:,} stored:")
        smalls[workers] = small_phase(run, store, key, workers)
        doc.setdefault(f"w{workers}", {})["small"] = phase_doc(smalls[workers])
        tables.append(main_table(run, store, workers, smalls[workers]))
        run.say("\n" + tables[-1] + "\n")
    run.say(f"  seeding up to {opts.large:,} {run.kind.name}s ...")
    took = seed(store, opts.org, run.kind, opts.small, opts.large)
    run.say(f"  seeded {opts.large - opts.small:,} more in {took:.1f} s")
    for workers in opts.workers:
        run.say(f"  {store.label}, {workers} worker(s), {opts.large:,} stored:")
        large = large_phase(run, store, key, workers)
        doc[f"w{workers}"]["large"] = phase_doc(large)
        tables.append(scale_table(run, store, workers, smalls[workers], large))
        run.say("\n" + tables[-1] + "\n")
    return tables


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str]) -> int:
    opts = parse(argv)
    wrk = ensure_wrk()
    facts = machine.facts(wrk)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    doc: dict[str, Any] = {"started": stamp, "machine": facts, "options": _options_doc(opts), "backends": {}}
    print(machine.describe(facts), flush=True)
    print(
        f"Figures: {opts.load.describe()} (+{opts.warmup_s} s warm-up each), loopback only; "
        f"{opts.small:,} then {opts.large:,} {opts.kind}s",
        flush=True,
    )
    # SIGTERM (a CI timeout, kill) and SIGHUP unwind like Ctrl-C, so the finally blocks stop
    # every server. SIGINT is set too: a shell starts background jobs with it ignored.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    workdir = Path(tempfile.mkdtemp(prefix="plinth-bench-"))
    all_tables: list[str] = []
    status = 0
    settle = cpu.Settle(opts.settle_budget_s)
    try:
        with Processes() as procs:
            run = Run(opts, wrk, procs, workdir, settle)
            for backend in opts.backends:
                reason = unavailable_reason(backend, opts.pg_admin_url)
                if reason is not None:
                    print(f"\n== {backend}: skipped: {reason}", flush=True)
                    doc["backends"][backend] = {"skipped": reason}
                    continue
                doc["backends"][backend] = {}
                with scratch_store(backend, workdir, opts.pg_admin_url) as store:
                    all_tables += run_backend(run, store, doc["backends"][backend])
    except KeyboardInterrupt:
        print("\ninterrupted: servers stopped, partial results kept", file=sys.stderr)
        status = 130
    finally:
        doc["settle_waited_s"] = settle.waited_s
        path = report.write_json(doc, opts.results_dir, stamp)
        if opts.keep:
            print(f"work directory kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if all_tables:
        waited = f"Waited {settle.waited_s:.0f} s in all for other processes to go quiet before figures."
        print("\n==== Summary\n" + machine.describe(facts) + "\n" + waited + "\n\n" + "\n\n".join(all_tables))
    print(f"\nresults: {path}")
    return status


def _options_doc(opts: Options) -> dict[str, Any]:
    doc = asdict(opts)
    doc["results_dir"] = str(opts.results_dir)
    doc.pop("pg_admin_url")
    return doc
