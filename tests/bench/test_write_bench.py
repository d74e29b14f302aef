"""``bench.writes``'s pure parts: the 1,000-document stack it applies and the disk's reference
rate. No timing is asserted."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

from bench.stack import large_stack
from bench.writes import durable_commit_rate
from plinth.cli.manifests import Placement, read_documents
from plinth.cli.plan import plan


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
    assert durable_commit_rate(tmp_path, runs=1) > 0
    assert list(tmp_path.iterdir()) == []
