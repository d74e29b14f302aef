"""The benchmark harness's pure parts: reading wrk's output and judging figures against targets.

The samples in ``data/`` are real wrk 4.1 outputs of scripts made by ``bench.loadgen.lua_script``
(a GET, the same GET without credentials, a PATCH of a missing item). No timing is asserted.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from bench import cpu
from bench.client import WalkTooSlow, page_url
from bench.loadgen import RequestPlan, WrkResult, lua_script, parse_output
from bench.report import Figure, ScaleFigure, errors_cell, format_table, memory_rows, scale_rows, throughput_rows
from bench.verdict import CEILING_TARGETS, MEMORY_TARGET, NOISE_NOTE, SCALE_TARGET, Target, mark, ratio

DATA = Path(__file__).parent / "data"


def result(rps: float = 1000.0, p50: float = 1.0, p99: float = 2.0, status_errors: int = 0) -> WrkResult:
    """A one-second run with ``rps`` requests."""
    return WrkResult(int(rps), 1.0, p50, p99, status_errors, 0)


# -- wrk output ---------------------------------------------------------------------------


def test_parse_successful_run() -> None:
    r = parse_output((DATA / "wrk_get_ok.txt").read_text())
    assert r.requests == 18783
    assert r.duration_s == pytest.approx(1.099467)
    assert r.rps == pytest.approx(18783 / 1.099467)
    assert r.p50_ms == pytest.approx(0.106)
    assert r.p99_ms == pytest.approx(1.544)
    assert (r.status_errors, r.socket_errors, r.errors, r.codes) == (0, 0, 0, {})


def test_parse_counts_failed_statuses() -> None:
    text = (DATA / "wrk_get_401.txt").read_text()
    assert "Non-2xx or 3xx responses: 18684" in text  # wrk's own count agrees with done()'s
    r = parse_output(text)
    assert r.status_errors == 18684
    assert r.errors == r.requests == 18684


def test_parse_write_plan_reports_statuses_summed_over_threads() -> None:
    r = parse_output((DATA / "wrk_patch_404.txt").read_text())
    assert r.codes == {"404": 13582}
    assert r.status_errors == 13582


def test_parse_takes_the_larger_failure_count_when_the_text_shows_more() -> None:
    text = (DATA / "wrk_get_ok.txt").read_text().replace("Requests/sec", "  Non-2xx or 3xx responses: 7\nRequests/sec")
    assert parse_output(text).status_errors == 7


def test_parse_without_the_done_line_names_the_problem() -> None:
    with pytest.raises(ValueError, match="BENCH_RESULT"):
        parse_output("Running 1s test @ http://127.0.0.1:8080/\nunable to connect to 127.0.0.1:8080\n")


def test_static_plan_leaves_wrk_its_fast_path() -> None:
    script = lua_script(RequestPlan("GET", "/org/acme/domain/d1"), {"Authorization": "Bearer k]]x"}, "t0")
    assert "function request" not in script and "function response" not in script
    # Long brackets deep enough for the value's own ']]', spaced so '[[[' never appears.
    assert "wrk.headers[ [[Authorization]] ] = [=[Bearer k]]x]=]" in script
    assert "function done" in script


def test_write_plan_builds_unique_bodies_and_counts_statuses() -> None:
    plan = RequestPlan("POST", "/org/acme/gvc/main/volumeset", '{"name":"vs-', '","spec":{}}')
    script = lua_script(plan, {}, "cafe01")
    assert "function request" in script and "function response" in script
    assert "RUN = [[cafe01]]" in script
    assert """PREFIX = [[{"name":"vs-]]""" in script
    assert "PATHS = {}" in script


def test_write_plan_can_rotate_over_items() -> None:
    plan = RequestPlan("PATCH", "/a", '{"description":"', '"}', ("/org/acme/domain/d1", "/org/acme/domain/d2"))
    script = lua_script(plan, {}, "t")
    assert "PATHS = {[[/org/acme/domain/d1]], [[/org/acme/domain/d2]]}" in script


# -- targets and tables -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "measured", "met"),
    [
        (Target(">=", 0.5), 0.5, True),
        (Target(">=", 0.5), 0.49, False),
        (Target("<=", 1.3), 1.3, True),
        (Target("<=", 1.3), 1.31, False),
        (Target("<", 150.0), 149.9, True),
        (Target("<", 150.0), 150.0, False),
    ],
)
def test_target_boundaries(target: Target, measured: float, met: bool) -> None:
    assert target.met(measured) is met
    assert mark(measured, target) == ("PASS" if met else "MISS")


def test_mark_flags_errors_before_judging_and_dashes_untargeted_figures() -> None:
    assert mark(0.9, Target(">=", 0.5), errors=3) == "ERR"
    assert mark(0.9, None) == "-"
    assert mark(None, Target(">=", 0.5)) == "-"
    assert ratio(5.0, 0.0) is None


def test_issue_targets() -> None:
    assert CEILING_TARGETS["sqlite"]["get"] == Target(">=", 0.50)
    assert CEILING_TARGETS["postgresql"]["get"] == Target(">=", 0.35)
    assert SCALE_TARGET.describe() == "≤ 1.3" and MEMORY_TARGET.describe() == "< 150"


def test_throughput_rows_ratio_to_the_ceiling_and_marks() -> None:
    ceiling = result(rps=20000, p50=0.1)
    figures = [
        Figure("GET domain", result(rps=10000), Target(">=", 0.5)),
        Figure("GET domain (pg)", result(rps=6000), Target(">=", 0.35)),
        Figure("PATCH domain", result(rps=500, status_errors=2)),
        Figure("POST volumeset", result(rps=2000)),
    ]
    rows = throughput_rows(figures, ceiling)
    by_label = {row[0]: row for row in rows}
    assert by_label["GET domain"][6:] == ["0.50", "≥ 0.5", "PASS"]
    assert by_label["GET domain (pg)"][6:] == ["0.30", "≥ 0.35", "MISS"]
    assert by_label["PATCH domain"][4:] == ["2", "0.00", "0.03", "", "ERR"]
    assert by_label["POST volumeset"][6:] == ["0.10", "", "-"]
    assert rows[-1][0] == "ceiling (bare ASGI)" and rows[-1][1] == "20,000" and rows[-1][6] == "1.00"


def test_scale_ratio_is_p50_many_over_few() -> None:
    within = ScaleFigure("GET domain", result(p50=0.20), result(p50=0.26), SCALE_TARGET)
    beyond = ScaleFigure("GET page", result(p50=1.00), result(p50=1.40), SCALE_TARGET)
    failed = ScaleFigure("GET deep", result(p50=1.00), result(p50=1.00, status_errors=1), SCALE_TARGET)
    rows = scale_rows([within, beyond, failed])
    assert [r[5] for r in rows] == ["1.30", "1.40", "1.00"]
    assert [r[8] for r in rows] == ["PASS", "MISS", "ERR"]


def test_memory_rows_judge_each_worker() -> None:
    rows = memory_rows({12: 149.0, 11: 151.2, 13: None}, MEMORY_TARGET)
    assert rows == [["11", "151.2", "< 150", "MISS"], ["12", "149.0", "< 150", "PASS"], ["13", "n/a", "< 150", "-"]]


def test_errors_cell_names_statuses_when_known() -> None:
    assert errors_cell(result()) == "0"
    assert errors_cell(WrkResult(10, 1.0, 1.0, 1.0, 3, 0, {"409": 2, "503": 1})) == "3 [409:2 503:1]"
    assert errors_cell(WrkResult(10, 1.0, 1.0, 1.0, 0, 4)) == "4"


def test_format_table_aligns_columns() -> None:
    text = format_table(("figure", "req/s"), [["GET", "1,000"], ["ceiling", "20,000"]])
    lines = text.splitlines()
    assert lines[0] == "figure    req/s"
    assert lines[1] == "-------  ------"
    assert lines[2] == "GET       1,000"
    assert lines[3] == "ceiling  20,000"


def test_figures_measured_on_a_busy_machine_are_starred_with_a_note() -> None:
    ceiling = result(rps=20000)
    busy = WrkResult(12000, 1.0, 0.2, 1.0, 0, 0, other_cores=0.6)
    rows = throughput_rows([Figure("GET domain", busy, Target(">=", 0.5))], ceiling)
    assert rows[0][5:] == ["0.60", "0.60", "≥ 0.5", "PASS*"]
    assert rows[1][-1] == "-"
    assert format_table(("figure", "mark"), [[r[0], r[-1]] for r in rows]).endswith(NOISE_NOTE)
    assert NOISE_NOTE not in format_table(("figure", "mark"), [["GET", "PASS"]])


# -- the cursor walk ----------------------------------------------------------------------


def _paged_api(pages: int) -> httpx.Client:
    """A fake list of ``pages`` pages whose ``next`` links carry the page number as the cursor."""

    def answer(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params.get("cursor", "1"))
        links = [{"rel": "self", "href": "/org/acme/domain"}]
        if page < pages:
            links.append({"rel": "next", "href": f"/org/acme/domain?limit=50&cursor={page + 1}"})
        return httpx.Response(200, json={"kind": "list", "items": [], "links": links})

    return httpx.Client(base_url="http://127.0.0.1:9", transport=httpx.MockTransport(answer))


def test_page_url_follows_next_links_to_the_page() -> None:
    with _paged_api(30) as api:
        assert page_url(api, "/org/acme/domain?limit=50", 1, 10) == "/org/acme/domain?limit=50"
        assert page_url(api, "/org/acme/domain?limit=50", 20, 10) == "/org/acme/domain?limit=50&cursor=20"
        with pytest.raises(RuntimeError, match="ended after 30 pages"):
            page_url(api, "/org/acme/domain?limit=50", 31, 10)


def test_page_url_gives_up_after_its_deadline() -> None:
    with _paged_api(30) as api, pytest.raises(WalkTooSlow, match="reached only page 1 of 20"):
        page_url(api, "/org/acme/domain?limit=50", 20, -1)


@pytest.mark.parametrize(
    ("before", "after", "lopsided"),
    [
        ({1: 100, 2: 100}, {1: 600, 2: 590}, False),  # both busy
        ({1: 100, 2: 100}, {1: 600, 2: 150}, True),  # one did a tenth of the other's work
        ({1: 100, 2: 100}, {1: 600, 2: 240}, False),  # uneven, but both served
        ({1: 100}, {1: 600}, False),  # one worker: nothing to balance
        ({1: 100, 2: 100}, {1: 100, 2: 100}, False),  # no work measured at all
        ({1: 100, 2: 100}, {1: 600}, True),  # a worker gone counts as idle
    ],
)
def test_a_run_that_left_a_worker_idle_is_lopsided(
    before: dict[int, int], after: dict[int, int], lopsided: bool
) -> None:
    assert cpu.lopsided(before, after) is lopsided
