"""``/metrics``: who may scrape, what it counts (every worker's requests, the store, the record
cache, the rate limit), and that no label holds a name a client chose."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.parser import text_string_to_metric_families

from plinth.metrics import LATENCY_BUCKETS, HistogramTally
from plinth.server.metrics import route_of
from tests.support.server import ServerProcess, serving

TOKEN = "scrape-token-for-tests"


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/org", "/org"),
        ("/org/acme", "/org/{org}"),
        ("/org/acme/-eventlog", "/org/{org}/-eventlog"),
        ("/org/acme/gvc", "/org/{org}/gvc"),
        ("/org/acme/gvc/main", "/org/{org}/gvc/{name}"),
        ("/org/acme/gvc/main/workload", "/org/{org}/gvc/{gvc}/workload"),
        ("/org/acme/gvc/main/workload/web", "/org/{org}/gvc/{gvc}/workload/{name}"),
        (
            "/org/acme/gvc/main/workload/web/deployment/aws-us-west-2",
            "/org/{org}/gvc/{gvc}/workload/{name}/deployment/{location}",
        ),
        ("/org/acme/gvc/main/workload/web/-command/c-1", "/org/{org}/gvc/{gvc}/workload/{name}/-command/{id}"),
        ("/org/acme/secret/-query", "/org/{org}/secret/-query"),
        ("/org/acme/secret/db/-reveal", "/org/{org}/secret/{name}/-reveal"),
        ("/org/acme/user/-for/email/a@b.c", "/org/{org}/user/-for/email/{email}"),
        ("/org/acme/policy/-schema/permissions", "/org/{org}/policy/-schema/permissions"),
        ("/org/acme/org/-schema/permissions", "/org/{org}/org/-schema/permissions"),
        ("/export/terraform/org/acme/gvc/main", "/export/terraform/org/{org}/gvc/{name}"),
        ("/healthz", "/healthz"),
        ("/metrics", "/metrics"),
        # Nothing a client makes up becomes a label value of its own.
        ("/org/acme/no-such-kind/x", "other"),
        ("/org/acme/gvc/main/-made-up-action", "other"),
        ("/org/acme/secret/db/-reveal/extra", "other"),
        ("/wp-login.php", "other"),
    ],
)
def test_a_path_is_labelled_with_its_route_template(path: str, route: str) -> None:
    assert route_of(path) == route


@contextlib.contextmanager
def _serve(backend: str, tmp_path: Path, *args: str) -> Iterator[ServerProcess]:
    token_file = tmp_path / "metrics.token"
    token_file.write_text(TOKEN + "\n")
    with serving(backend, tmp_path / "data", ("--workers", "2", "--metrics-token-file", str(token_file), *args)) as s:
        yield s


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    with _serve(request.param, tmp_path) as running:
        yield running


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(server: ServerProcess) -> Samples:
    """Every sample of one scrape (on a new connection: either worker may answer it)."""
    reply = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(reply.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_a_scrape_needs_the_metrics_token_not_an_api_key(server: ServerProcess) -> None:
    assert httpx.get(f"{server.url}/metrics").status_code == 401
    wrong = httpx.get(f"{server.url}/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and "metrics token" in wrong.json()["message"]
    api_key = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {server.key}"})
    assert api_key.status_code == 401
    assert httpx.post(f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 405
    assert scrape(server)


def test_every_worker_counts_and_any_worker_answers_with_the_sum(server: ServerProcess) -> None:
    with server.client() as api:
        assert api.post("/org/acme/gvc", json={"name": "counted"}).status_code == 201
    reads = 40
    for _ in range(reads):
        with server.client() as api:  # a new connection each time: both workers serve some
            assert api.get("/org/acme/gvc/counted").status_code == 200
    with server.client() as api:
        assert api.get("/org/acme/gvc/missing").status_code == 404
    route = "/org/{org}/gvc/{name}"
    backend = "postgresql" if "postgresql" in httpx.get(f"{server.url}/about").text else "sqlite"

    def gets(samples: Samples, status: str) -> float:
        return value(samples, "plinth_http_request_duration_seconds_count", method="GET", route=route, status=status)

    # Each worker adds its tallies to the shared values every second (plinth.metrics.FLUSH_S).
    deadline = time.monotonic() + 30
    while True:  # the 404 may have been served by the worker that flushes last
        samples = scrape(server)
        if gets(samples, "2xx") >= reads and gets(samples, "4xx") >= 1:
            break
        assert time.monotonic() < deadline, "the workers' counts never added up"
        time.sleep(0.2)
    for _ in range(6):  # then whichever worker answers, it reports every worker's counts
        samples = scrape(server)
        assert (gets(samples, "2xx"), gets(samples, "4xx")) == (reads, 1)
        created = value(
            samples, "plinth_http_request_duration_seconds_count", method="POST", route="/org/{org}/gvc", status="2xx"
        )
        assert created == 1
        commits = value(samples, "plinth_store_operation_duration_seconds_count", backend=backend, operation="commit")
        assert commits >= 1
        hits = value(samples, "plinth_record_cache_requests_total", backend=backend, result="hit")
        misses = value(samples, "plinth_record_cache_requests_total", backend=backend, result="miss")
        assert hits > 0 and misses > 0
        [info] = [labels for (name, labels) in samples if name == "plinth_build_info"]
        assert dict(info)["store"] == backend
        assert value(samples, "plinth_http_connections") >= 1  # this scrape's own
        assert value(samples, "plinth_watchers") == 0


def test_a_flushed_tally_exports_what_direct_observations_would() -> None:
    """``HistogramTally`` adds to the histogram's own buckets and sum (private attributes of
    prometheus_client): pinned against the public ``observe``."""
    registry = CollectorRegistry()
    tallied = Histogram("tallied_seconds", "t", ["route"], buckets=LATENCY_BUCKETS, registry=registry)
    direct = Histogram("direct_seconds", "d", ["route"], buckets=LATENCY_BUCKETS, registry=registry)
    tally = HistogramTally(tallied.labels("/x"))
    observations = [0.0, 0.0004, 0.0005, 0.0007, 0.003, 0.003, 0.2, 9.9, 10.0, 12.5, 400.0]
    for seconds in observations:
        tally.observe(seconds)
        direct.labels("/x").observe(seconds)
    tally.flush()
    tally.flush()  # a second flush adds nothing

    def samples(prefix: str) -> list[tuple[str, dict[str, str], float]]:
        return [
            (s.name.removeprefix(prefix), s.labels, s.value)
            for family in registry.collect()
            for s in family.samples
            if s.name.startswith(prefix) and not s.name.endswith("_created")
        ]

    assert samples("tallied") == samples("direct")
    assert samples("tallied")


def test_no_label_holds_a_name_a_client_chose(server: ServerProcess) -> None:
    with server.client() as api:
        api.post("/org/acme/gvc", json={"name": "secretive-name"})
        api.get("/org/acme/gvc/secretive-name")
        api.get("/org/acme/made-up-kind-zz/thing-qq")
        api.get("/org/acme/gvc/secretive-name/-made-up-action-yy")
    text = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
    for chosen in ("acme", "secretive-name", "made-up-kind-zz", "thing-qq", "made-up-action-yy"):
        assert chosen not in text


def test_rate_limit_rejections_are_counted(tmp_path: Path) -> None:
    with _serve("sqlite", tmp_path, "--rate-limit", "0.01", "--rate-burst", "2") as server:
        with server.client() as api:
            statuses = [api.get("/org/acme").status_code for _ in range(5)]
        limited = statuses.count(429)
        assert limited >= 1  # two workers: up to two buckets of two
        assert value(scrape(server), "plinth_rate_limited_requests_total", caller="principal") == limited


def test_public_metrics_need_no_token(tmp_path: Path) -> None:
    with serving("sqlite", tmp_path / "data", ("--metrics-public",)) as server:
        assert httpx.get(f"{server.url}/metrics").status_code == 200


def test_without_a_token_or_public_nobody_may_scrape_and_is_told_how(tmp_path: Path) -> None:
    with serving("sqlite", tmp_path / "data") as server:
        refused = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {server.key}"})
        assert refused.status_code == 401
        assert "--metrics-token-file" in refused.json()["message"]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--metrics-public", "--metrics-token-file", "{token}"), "drop --metrics-token-file"),
        (("--metrics-token-file", "{empty}"), "is empty"),
    ],
)
def test_contradictory_or_empty_metrics_settings_are_usage_errors(
    tmp_path: Path, args: tuple[str, ...], problem: str
) -> None:
    (tmp_path / "token").write_text("t")
    (tmp_path / "empty").write_text("\n")
    paths = {"{token}": str(tmp_path / "token"), "{empty}": str(tmp_path / "empty")}
    argv = [sys.executable, "-m", "plinth", "serve", "--port", "0", "--data-dir", str(tmp_path / "d")]
    argv += [paths.get(a, a) for a in args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and problem in done.stderr
    assert not (tmp_path / "d").exists()
