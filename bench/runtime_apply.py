"""Figure 4 of ``bench.runtime``: ``plinth apply --ready`` of a stack of 3 workloads and a domain,
until the first 200 through the gateway, against the same 3 containers started with ``podman
run`` until each answers its first 200 (target: at most 1.5 times).

It needs ``plinth serve --runtime containers`` (with ``--gateway-listen`` and ``--container-label``)
and a CLI that applies with ``--ready``: ``plinth apply``, else the official ``cpln apply`` where
``tests/compat`` installed it (``bench.apply.CPLN``); until they exist, :func:`main` prints why it
is skipped. Each side starts from nothing: the image is in the engine's store (the stage built
it), no container of the stack runs. Both sides' containers carry the run's ``plinth.test-run``
label and are removed at the end, also on failure. The engine is set up as the tests set it up
(``bench.runtime_stage.engine_config``). The figure is the median of :data:`ROUNDS` pairs, each
the reference then the served side, so that one pair caught by a burst of the machine's other
work does not decide it (each pair is printed). Run alone: ``python -m bench.runtime_apply``.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench import cpu
from bench.apply import CPLN
from bench.procs import free_port
from bench.runtime_stage import LOCATION, engine_config, until
from bench.verdict import Target, mark, noted, ratio
from tests.support import containers

TARGET = Target("<=", 1.5)
DOMAIN = "bench-app.example.com"
WORKLOADS = ("web", "api", "worker")
PROBE_S = 2.0  # the other-load probe before the figure
ROUNDS = 3
#: What each workload's container asks for, and the same as ``podman run`` flags for the
#: reference, which starts the same containers. Set rather than left to the platform's defaults
#: (50 millicores): a CPU quota of 5% slows every container's start by ~0.2 s on this kind of
#: machine (runc's set-up runs inside the container's cgroup), on both sides alike, which would
#: hide what Plinth adds (measured: Plinth 830 ms against 1,240 ms for the same throttled
#: containers started one after another, and 523 ms without any limit). The bare ``podman run``
#: without limits is printed beside it.
RESOURCES = {"cpu": "1000m", "memory": "128Mi"}
LIMITS = ("--cpus", "1", "--memory", str(128 * 1024 * 1024))


def _help(*command: str) -> str:
    argv = [sys.executable, "-m", "plinth", *command, "--help"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False).stdout


def applier() -> tuple[list[str] | None, str]:
    """The CLI that applies with ``--ready`` (``plinth apply``, else the official ``cpln apply``
    where ``tests/compat`` installed it) and its name; or ``None`` and why the figure cannot be
    measured with this Plinth."""
    serve = _help("serve")
    if "containers" not in serve or "--gateway-listen" not in serve:
        return None, "'plinth serve --help' lists no '--runtime containers' with '--gateway-listen' yet"
    if "--ready" in _help("apply"):
        return [sys.executable, "-m", "plinth", "apply", "-f"], "plinth apply --ready"
    if Path(CPLN).exists():
        return [CPLN, "apply", "--file"], "cpln apply --ready"
    return None, f"'plinth apply --help' lists no '--ready' yet, and the official CLI is not at {CPLN}"


def stack(image: str) -> list[dict[str, Any]]:
    """A GVC, 3 one-replica workloads of the test image open to 127.0.0.1, a domain to ``web``."""
    docs: list[dict[str, Any]] = [
        {"kind": "gvc", "name": "main", "spec": {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}}
    ]
    for name in WORKLOADS:
        container = {"name": "main", "image": image, "ports": [{"number": 8080, "protocol": "http"}], **RESOURCES}
        spec = {
            "type": "standard",
            "containers": [container],
            "defaultOptions": {"autoscaling": {"minScale": 1, "maxScale": 1}},
            "firewallConfig": {"external": {"inboundAllowCIDR": ["127.0.0.1/32"]}},
        }
        docs.append({"kind": "workload", "name": name, "gvc": "main", "spec": spec})
    route = {"prefix": "/", "workloadLink": "//gvc/main/workload/web"}
    docs.append({"kind": "domain", "name": DOMAIN, "spec": {"ports": [{"routes": [route]}]}})
    return docs


def first_200(url: str, host: str | None = None) -> bool:
    try:
        return httpx.get(url, headers={"Host": host} if host else {}, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=5)
        return True
    except httpx.HTTPError:
        return False


def served(work: Path, image: str, run_id: str, apply: list[str]) -> float:
    """Seconds from ``apply -f STACK --ready`` to the domain's first 200 through the gateway."""
    from tests.support.server import start_server

    work.mkdir(parents=True, exist_ok=True)
    org = f"a{uuid.uuid4().hex[:10]}"
    listen = f"127.0.0.1:{free_port()}"
    # The run's label on every container: the stage's clean-up removes them with the rest.
    label = f"{containers.TEST_RUN}={run_id}"
    args = ("--runtime", "containers", "--gateway-listen", listen, "--container-label", label)
    server = start_server(work / "data", org=org, extra_args=args)
    try:
        manifest = work / "stack.json"  # JSON is YAML: both CLIs read it, several documents as a list
        manifest.write_text(json.dumps({"kind": "list", "items": stack(image)}))
        command = [*apply, str(manifest), "--org", org, "--ready", "--endpoint", server.url, "--token", server.key]
        env = {**os.environ, "PLINTH_HOME": str(work / "home"), "CPLN_HOME": str(work / "cpln-home")}
        env["CPLN_SKIP_UPDATE_CHECK"] = "1"
        # The clock starts once the server's controller has its gateway up (404: nothing routed).
        until(lambda: answers(f"http://{listen}/"), f"the gateway on {listen}", 60, 0.1)
        began = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command[:3])} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        until(lambda: first_200(f"http://{listen}/", DOMAIN), f"200 from {DOMAIN} through the gateway", 120, 0.05)
        return time.monotonic() - began
    finally:
        server.stop()
        _remove(f"plinth.org={org}")


def direct(image: str, limits: tuple[str, ...] = LIMITS) -> float:
    """Seconds from the first ``podman run`` of the 3 containers (with ``limits``) to the first
    200 of each."""
    run_id = containers.new_run_id()
    label = f"{containers.TEST_RUN}={run_id}"
    try:
        began = time.monotonic()
        ports = []
        for name in WORKLOADS:
            argv = ["run", "-d", "--label", "plinth.managed=true", "--label", label, "--name", f"bench-{run_id}-{name}"]
            containers.podman(*argv, *limits, "--publish", "127.0.0.1::8080", image)
            mapping = containers.podman("port", f"bench-{run_id}-{name}", "8080").stdout.strip()
            ports.append(int(mapping.rsplit(":", 1)[1]))
        for port in ports:
            url = f"http://127.0.0.1:{port}/"
            until(functools.partial(first_200, url), f"200 from {url}", 120, 0.05)
        return time.monotonic() - began
    finally:
        containers.cleanup(run_id)


def others_load(seconds: float = PROBE_S) -> float:
    """Cores others used over ``seconds`` while this bench idles (nothing of the figure runs
    yet): how far the figure can be trusted on this shared machine."""
    group = os.getpgid(0)
    before = cpu.snapshot(group)
    time.sleep(seconds)
    return cpu.other_cores(before, cpu.snapshot(group))


def _remove(label: str) -> None:
    ids = containers.podman("ps", "--all", "--quiet", "--filter", f"label={label}", check=False).stdout.split()
    if ids:
        containers.podman("rm", "--force", "--time", "0", *ids, check=False)


def _median_ratio(rounds: list[tuple[float, float, float]], reference: int) -> float | None:
    """The median over rounds of ours / the ``reference``-th figure of the round."""
    shares = [share for r in rounds if (share := ratio(r[0], r[reference])) is not None]
    return statistics.median(shares) if shares else None


def main(work: Path | None = None) -> int:
    """Print the figure, or why it is skipped."""
    print("apply --ready of 3 workloads and a domain, until the first 200 through the gateway")
    apply, name = applier()
    if apply is None:
        print(f"  skipped: {name}")
        return 0
    rounds: list[tuple[float, float, float]] = []  # (ours, the same containers, bare podman run)
    with tempfile.TemporaryDirectory(prefix="bench-apply-ready-") as scratch:
        folder = work or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        with engine_config(folder) as (image, run_id):
            others = others_load()
            for round_no in range(ROUNDS):
                reference, bare = direct(image), direct(image, ())
                ours = served(folder / f"round-{round_no}", image, run_id, apply)
                rounds.append((ours, reference, bare))
                print(
                    f"  round {round_no + 1}: {name} {ours * 1000:,.0f} ms, podman run {reference * 1000:,.0f} ms"
                    f" (without limits {bare * 1000:,.0f} ms)"
                )
    share = _median_ratio(rounds, 1)
    print(f"  {name:<34} {statistics.median(r[0] for r in rounds) * 1000:8,.0f} ms (median)")
    print(f"  {'podman run, same limits (reference)':<34} {statistics.median(r[1] for r in rounds) * 1000:8,.0f} ms")
    print(f"  {'podman run without limits':<34} {statistics.median(r[2] for r in rounds) * 1000:8,.0f} ms")
    shown = f"{share:.2f}" if share is not None else "n/a"
    bare_share = _median_ratio(rounds, 2)
    print(f"  others' load before the figure: {others:.2f} cores")
    verdict = noted(mark(share, TARGET), others)
    print(f"  ratio {shown}, the median of {len(rounds)} rounds (target {TARGET.describe()}): {verdict}")
    print(f"  ratio to podman run without limits: {bare_share:.2f}" if bare_share is not None else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
