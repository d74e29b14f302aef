"""A list of 10,000 items in a real browser: correctness is asserted (counts, order, every item
reachable by paging at the largest page size); the times are MEASURED, never asserted, written
to ``build/console-figures.json`` under ``list10k`` (other tests write other sections there)
and printed.

Measured in the page itself: each action starts at ``performance.now()`` inside the page and
ends after the frame that shows the page the list's status announces (a MutationObserver,
then ``requestAnimationFrame``); the longest main-thread
task comes from a ``longtask`` PerformanceObserver; and a key typed into the filter box while a
page of 1,000 is loading shows whether the page stayed responsive (and how long the key took to
land)."""

from __future__ import annotations

import asyncio
import fcntl
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.console import pages
from tests.support.paths import ROOT
from tests.support.server import ServerProcess, start_server

ITEMS = 10_000
BUILT_IN = ("superusers", "viewers")  # every org's own groups are listed too
SEED_CONCURRENCY = 16
FIGURES = ROOT / "build" / "console-figures.json"
SECTION = "list10k"

#: Installed once per page load: every long task of the main thread, recorded.
INSTRUMENT = """
if (!window.__long) {
  window.__long = [];
  const keep = (list) => { for (const e of list.getEntries()) window.__long.push([e.startTime, e.duration]); };
  new PerformanceObserver(keep).observe({ type: 'longtask', buffered: true });
}
"""
#: Does one action (`route` to a hash, `click` or `change` an element by CSS selector: no code is
#: made from text, which the console's policy would refuse) and answers once its page is shown.
ACT = """
const [how, what, done] = arguments;
const status = () => document.getElementById('list-status');
if (status()) status().textContent = '';
const t0 = performance.now();
// Ends after the frame that shows the page: its style, layout and paint count too.
const finish = () => requestAnimationFrame(() => setTimeout(measured, 0));
// Long tasks are reported a little after they end: they are read 300 ms later.
const measured = () => {
  const t1 = performance.now();
  setTimeout(() => report(t1), 300);
};
const report = (t1) => {
  const longest = Math.max(0, ...window.__long.filter(([s, d]) => s + d >= t0 && s <= t1).map(([, d]) => d));
  done({ ms: t1 - t0, longestTaskMs: longest });
};
const drawn = () => status() && /^(Page|No )/.test(status().textContent);
new MutationObserver((_, observer) => { if (drawn()) { observer.disconnect(); finish(); } })
  .observe(document.body, { subtree: true, childList: true, characterData: true });
if (how === 'route') window.location.hash = what;
else if (how === 'click') document.querySelector(what).click();
else document.querySelector(what).dispatchEvent(new Event('change'));
"""


async def _seed(server: ServerProcess) -> None:
    limits = httpx.Limits(max_connections=SEED_CONCURRENCY, max_keepalive_connections=SEED_CONCURRENCY)
    headers = {"Authorization": f"Bearer {server.key}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, limits=limits, timeout=60) as client:
        numbers = iter(range(ITEMS))

        async def create(body: dict[str, object]) -> None:
            # A connection the server closes as idle just as a request goes out on it is HTTP/1.1's
            # keep-alive race: the request never reached the server (its log shows no answer), and
            # a client may only try again, taking a 409 as the first attempt having landed after all.
            for attempt in range(3):
                try:
                    answer = await client.post(f"/org/{server.org}/group", json=body)
                except httpx.TransportError:
                    if attempt == 2:
                        raise
                    continue
                if not (answer.status_code == 409 and attempt > 0):
                    answer.raise_for_status()
                return

        async def worker() -> None:
            for n in numbers:
                await create({"name": f"load-{n:05d}", "description": f"item {n}", "tags": {"shard": str(n % 10)}})

        await asyncio.gather(*(worker() for _ in range(SEED_CONCURRENCY)))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server holding 10,000 groups, seeded through the API (no rate limit for the seeding)."""
    process = start_server(tmp_path_factory.mktemp("plinth-console-scale"), extra_args=("--rate-limit", "0"))
    try:
        started = time.monotonic()
        asyncio.run(_seed(process))
        process.seed_s = time.monotonic() - started  # type: ignore[attr-defined]
        yield process
    finally:
        process.stop()


def act(driver: Any, how: str, what: str) -> dict[str, float]:
    driver.set_script_timeout(60)
    return dict(driver.execute_async_script(ACT, how, what))


def record(figures: dict[str, Any]) -> None:
    """Merge this section into the shared figures file (read-modify-write under a lock)."""
    FIGURES.parent.mkdir(exist_ok=True)
    with open(FIGURES.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        existing = json.loads(FIGURES.read_text()) if FIGURES.exists() else {}
        existing[SECTION] = figures
        FIGURES.write_text(json.dumps(existing, indent=2, sort_keys=True) + "\n")
    print(f"\n{SECTION}: {json.dumps(figures, indent=2)}")


def test_ten_thousand_items_page_sort_and_filter_without_freezing(browser: Any, server: ServerProcess) -> None:
    expected = sorted([f"load-{n:05d}" for n in range(ITEMS)] + list(BUILT_IN))
    route = f"#/org/{server.org}/group"
    pages.sign_in(browser, server.url, server.key)
    browser.execute_script(INSTRUMENT)
    figures: dict[str, Any] = {"items": ITEMS, "seed_s": round(server.seed_s, 1)}  # type: ignore[attr-defined]

    first = act(browser, "route", route)
    figures["first_page_50"] = first
    assert pages.rows(browser) == expected[:50]

    forward = []
    for n in range(10):
        forward.append(act(browser, "click", "#page-next"))
        assert pages.rows(browser) == expected[50 * (n + 1) : 50 * (n + 2)]
    figures["page_forward_10_at_50"] = summary(forward)

    # The largest page: the key typed meanwhile lands (the page stayed responsive).
    browser.execute_script(
        "window.__typedAt = null; const f = document.getElementById('filter-tag');"
        " f.addEventListener('input', () => { if (window.__typedAt === null) {"
        " window.__typedAt = performance.now();"
        " window.__typedWhile = document.getElementById('list-status').textContent; } });"
    )
    # The key goes straight to the focused box through the browser's input pipeline (CDP), so
    # that it arrives while the rows are being drawn, as a person's would.
    browser.execute_script(
        "document.getElementById('filter-tag').focus();"
        " window.__sizeStarted = performance.now(); const s = document.getElementById('page-size');"
        " s.value = '1000'; s.dispatchEvent(new Event('change'));"
    )
    browser.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyDown", "key": "x", "text": "x"})
    browser.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyUp", "key": "x"})
    pages.wait_text(browser, "#list-status", "Page 1: 1000 items")
    typed = browser.execute_script("return [window.__typedAt, window.__sizeStarted, window.__typedWhile];")
    assert pages.find(browser, "#filter-tag").get_attribute("value") == "x"
    figures["key_typed_during_1000_load"] = {
        "registered": typed[0] is not None,
        # Whether it landed before the page was drawn (it may come after, on a fast load).
        "landed_while_loading": typed[2] == "Loading…",
        "ms_after_load_start": typed[0] - typed[1],
    }
    pages.find(browser, "#filter-tag").clear()
    assert pages.rows(browser) == expected[:1000]

    figures["page_size_1000"] = act(browser, "change", "#page-size")
    figures["sort_desc_1000"] = act(browser, "click", "button.sort[data-sort=name]")
    assert pages.rows(browser) == expected[::-1][:1000]
    figures["sort_asc_1000"] = act(browser, "click", "button.sort[data-sort=name]")
    assert pages.rows(browser) == expected[:1000]

    # Every item is reachable by paging at 1,000 a page, in order, each once.
    seen = list(pages.rows(browser))
    forward = []
    while pages.find(browser, "#page-next").get_attribute("disabled") is None:
        forward.append(act(browser, "click", "#page-next"))
        seen += pages.rows(browser)
    assert seen == expected
    figures["page_forward_all_at_1000"] = summary(forward)

    pages.find(browser, "#filter-name").send_keys("load-0042")
    figures["filter_1000"] = act(browser, "click", "#filters button[type=submit]")
    assert pages.rows(browser) == [n for n in expected if "load-0042" in n]
    Select(pages.find(browser, "#page-size")).select_by_value("50")
    pages.find(browser, "#filter-name").clear()
    pages.find(browser, "#filter-tag").send_keys("shard=7")
    figures["filter_tag_50"] = act(browser, "click", "#filters button[type=submit]")
    assert pages.rows(browser) == [f"load-{n:05d}" for n in range(7, ITEMS, 10)][:50]
    figures["longest_task_ms_overall"] = max([e[1] for e in browser.execute_script("return window.__long;")] or [0])
    assert not browser.find_element(By.ID, "notice").is_displayed()  # no error on the way
    assert pages.script_errors(browser) == []
    record(rounded(figures))


def summary(runs: list[dict[str, float]]) -> dict[str, float]:
    return {
        "pages": len(runs),
        "total_ms": sum(r["ms"] for r in runs),
        "mean_ms": sum(r["ms"] for r in runs) / len(runs),
        "max_ms": max(r["ms"] for r in runs),
        "longest_task_ms": max(r["longestTaskMs"] for r in runs),
    }


def rounded(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return round(value, 1) if isinstance(value, float) else value
