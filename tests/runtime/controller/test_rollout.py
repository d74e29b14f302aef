"""``rolloutOptions`` read with the platform's defaults, and the batches a rollout makes of a
workload's replicas (pure: no engine)."""

from __future__ import annotations

from plinth.runtime.controller.rollout import RolloutPolicy, batches, rollout_policies, rollout_policy


def _slots(*replicas: tuple[str, str], containers: int = 1) -> list[tuple[str, str, str, str, str, str]]:
    return [("o", "g", "w", loc, rep, f"c{i}") for loc, rep in replicas for i in range(containers)]


def test_defaults_are_kubernetes_25_percent_surge_and_unavailable() -> None:
    policy = rollout_policy({"spec": {}})
    assert policy == RolloutPolicy("25%", "25%", 0.0, False)
    assert policy.batch(1) == (1, 0)  # 25% of 1: surge rounds up, unavailable down
    assert policy.batch(2) == (1, 0)
    assert policy.batch(4) == (1, 1)
    assert policy.batch(10) == (3, 2)


def test_counts_percentages_min_ready_and_scaling_policy_are_read() -> None:
    spec = {
        "rolloutOptions": {
            "maxSurgeReplicas": "50%",
            "maxUnavailableReplicas": "2",
            "minReadySeconds": 3,
            "scalingPolicy": "Parallel",
        }
    }
    policy = rollout_policy({"spec": spec})
    assert policy.min_ready_s == 3 and policy.parallel
    assert policy.batch(3) == (2, 2)
    assert RolloutPolicy("0", "0").batch(5) == (1, 0), "never both zero: one surges"
    assert RolloutPolicy("0", "100%").batch(3) == (0, 3)


def test_policies_are_keyed_by_org_gvc_and_workload() -> None:
    doc = {"name": "w", "links": [{"rel": "self", "href": "/org/o/gvc/g/workload/w"}], "spec": {}}
    assert rollout_policies([doc, {"name": "broken"}], "o") == {("o", "g", "w"): RolloutPolicy()}


def test_standard_replicas_go_in_batches_of_surge_plus_unavailable_per_location() -> None:
    slots = _slots(("a", "w-0"), ("a", "w-1"), ("a", "w-2"), ("a", "w-3"), ("b", "w-0"), containers=2)
    made = batches(RolloutPolicy("1", "1"), slots, stateful=False)
    shape = [[(group[0][4], len(group), in_place) for group, in_place in batch] for batch in made]
    assert shape == [
        [("w-0", 2, False), ("w-1", 2, True)],  # the first surges, the second is replaced in place
        [("w-2", 2, False), ("w-3", 2, True)],
        [("w-0", 2, False)],  # location b
    ]


def test_stateful_replicas_go_one_at_a_time_unless_parallel() -> None:
    slots = _slots(("a", "db-0"), ("a", "db-1"), ("a", "db-2"))
    ordered = batches(RolloutPolicy(), slots, stateful=True)
    assert [[group[0][4] for group, _ in batch] for batch in ordered] == [["db-0"], ["db-1"], ["db-2"]]
    parallel = batches(RolloutPolicy(parallel=True), slots, stateful=True)
    assert [[group[0][4] for group, _ in batch] for batch in parallel] == [["db-0", "db-1", "db-2"]]
    assert all(in_place for batch in parallel for _, in_place in batch)
