"""The quota kind's declaration and pure parts: the known quotas, ids derived the same way on
every server, only ``max`` taken from a body, and the 429's message naming the quota."""

from __future__ import annotations

import copy

from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.kinds import REGISTRY
from plinth.kinds.base import KindContext
from plinth.kinds.quota import LIMITING, QUOTA, QUOTAS, exceeded_message, quota_fields, quota_id


def test_declaration() -> None:
    assert REGISTRY["quota"] is QUOTA
    assert (QUOTA.scope, QUOTA.access.verbs) == ("org", frozenset({"get", "list", "patch"}))
    assert QUOTA.schema.addressed_by_id and not QUOTA.schema.has_tags and QUOTA.presentation.terraform_resource is None
    assert {"origin", "max", "current", "unit"} <= set(QUOTA.presentation.query_properties)
    assert "delete" not in QUOTA.access.permissions and QUOTA.access.implied["edit"] == ("view",)
    assert {q.name: (q.counts, q.per_gvc) for q in QUOTAS} == {
        "agents": ("agent", False),
        "domains": ("domain", False),
        "identities-per-gvc": ("identity", True),
        "workloads-per-gvc": ("workload", True),
    }
    assert LIMITING["workload"].name == "workloads-per-gvc"


def test_ids_are_derived_from_the_org_the_quota_and_the_gvc() -> None:
    workloads = LIMITING["workload"]
    first = quota_id("acme", workloads, "prod")
    assert first == quota_id("acme", workloads, "prod")
    assert len({first, quota_id("acme", workloads, "dev"), quota_id("other", workloads, "prod")}) == 3
    assert quota_id("acme", LIMITING["agent"], None) != quota_id("acme", LIMITING["domain"], None)


def test_only_max_is_taken_from_a_body() -> None:
    stored = {"kind": "quota", **quota_fields(LIMITING["workload"], "prod", 3), "id": "q", "version": 1}
    ctx = KindContext(org="acme", now="2026-01-01T00:00:00.000Z", id="q")
    body = {"max": 7, "name": "renamed", "current": 0, "unit": "boxes", "dimensions": {}, "origin": "builtin"}
    candidate, errors = build_candidate(QUOTA, strip_server_owned(QUOTA, copy.deepcopy(body)), stored, ctx, "q")
    assert errors == []
    assert (candidate["max"], candidate["name"], candidate["current"], candidate["unit"]) == (
        7,
        "workloads-per-gvc",
        3,
        "workloads",
    )
    assert (candidate["dimensions"], candidate["origin"]) == ({"gvc": "prod"}, "default")
    assert "tags" not in candidate
    _, errors = build_candidate(QUOTA, {"max": -1, "tags": {"a": "b"}}, stored, ctx, "q")
    assert sorted(e.path for e in errors) == ["max", "tags"]


def test_the_message_names_the_quota() -> None:
    message = exceeded_message(LIMITING["workload"], "prod", 2)
    assert message == (
        "Quota 'workloads-per-gvc' of 2 workloads for GVC 'prod' is exhausted; delete some or raise the quota's max"
    )
    assert "the org" in exceeded_message(LIMITING["domain"], None, 1000)
