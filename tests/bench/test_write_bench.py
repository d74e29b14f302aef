"""``bench.writes``'s parts: the 1,000-document stack it applies, the disk's reference rate and
the seed's way through commits that time out. No timing is asserted."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bench.seed import BufferedCommits
from bench.stack import large_stack
from bench.writes import durable_commits, median_ratio
from plinth.cli.manifests import Placement, read_documents
from plinth.cli.plan import plan
from plinth.storage.base import Key, Operation, Put, Record, StorageError
from plinth.storage.query import ListRequest
from plinth.storage.sqlite import SqliteStorage
from tests.aio import RunAsync
from tests.storage.records import make_record


def test_the_large_stack_has_the_issues_thousand_documents_and_every_link_inside_it(tmp_path: Path) -> None:
    docs = large_stack()
    kinds = Counter(doc["kind"] for doc in docs)
    assert kinds == {
        "gvc": 1,
        "secret": 150,
        "identity": 49,
        "volumeset": 200,
        "workload": 300,
        "domain": 200,
        "policy": 100,
    }
    manifest = tmp_path / "stack.json"
    manifest.write_text(json.dumps({"kind": "list", "items": docs}))
    steps = plan(read_documents((str(manifest),), io.StringIO(), Placement("acme", None, None)))
    # Links kept: the GVC first, then what lives in it; domains and workloads wait for targets.
    assert steps[0].document.body["kind"] == "gvc" and not steps[0].needs
    levels = {step.document.body["kind"]: step.level for step in steps}
    assert levels["workload"] > levels["identity"] and levels["domain"] > levels["workload"]


def test_the_reference_rate_is_measured_and_cleaned_up(tmp_path: Path) -> None:
    disk = durable_commits(tmp_path, runs=1)
    assert disk.rate > 0 and 0 < disk.p99_ms <= disk.max_ms and disk.seconds == 1
    assert list(tmp_path.iterdir()) == []


def test_the_apply_ratio_is_the_median_of_the_pairs_ratios() -> None:
    # The second pair ran in a slow stretch for the official CLI: its ratio is the outlier.
    assert median_ratio([1.0, 1.2, 1.1], [4.0, 8.0, 4.4]) == 0.25
    assert median_ratio([1.0], [0.0]) is None


class _FlakyStore:
    """A real store whose commits fail as a loaded machine made them fail: the first after it
    committed (the answer came too late: "did not answer within 5 s"), the second before."""

    def __init__(self, storage: SqliteStorage) -> None:
        self._storage = storage
        self.commits = 0

    async def get(self, key: Key, *, fresh: bool = False) -> Record | None:
        return await self._storage.get(key, fresh=fresh)

    async def commit(self, ops: Sequence[Operation]) -> None:
        self.commits += 1
        if self.commits == 1:
            await self._storage.commit(ops)
            raise StorageError("unavailable", None, "the database did not answer within 5 s")
        if self.commits == 2:
            raise StorageError("unavailable", None, "the database did not answer within 5 s")
        await self._storage.commit(ops)


def test_the_seed_writes_every_item_once_through_commits_that_time_out(tmp_path: Path, run_async: RunAsync) -> None:
    storage = run_async(SqliteStorage.open(tmp_path / "plinth.db"))
    try:
        flaky = _FlakyStore(storage)
        buffered = BufferedCommits(flaky, "thing", set())  # type: ignore[arg-type]
        buffered.batch_items = 4
        records = [make_record("acme", f"item-{n}") for n in range(10)]
        for record in records:
            run_async(buffered.commit([Put(record, None)]))
        run_async(buffered.flush())
        stored = run_async(storage.list_page(ListRequest("acme", records[0].key.kind, "", 100)))
        assert sorted(r.key.name for r in stored) == sorted(r.key.name for r in records)
        assert {r.key.name: r.id for r in stored} == {r.key.name: r.id for r in records}
        assert buffered.batch_items == 1  # halved at each timeout: 4, 2, 1
        assert buffered.queued_items == 0
    finally:
        run_async(storage.close())
