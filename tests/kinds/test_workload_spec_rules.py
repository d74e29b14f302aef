"""The workload-level rules and the type matrix (docs.controlplane.com/reference/workload/types), each at its exact
path."""

from __future__ import annotations

from typing import Any

import pytest
from _workload_spec_support import (
    KEDA_GVC,
    PARENT_GVC,
    autoscaled,
    container,
    context,
    errors_for,
    pairs,
    served,
    stored,
    workload,
    write,
)

from plinth.kinds.base import Item
from plinth.kinds.workload.rules import validate_workload, workload_name_rule

GPU = {"nvidia": {"model": "t4", "quantity": 1}}
DEFAULT = "spec.defaultOptions"
AUTOSCALING = f"{DEFAULT}.autoscaling"
LOCAL = "spec.localOptions[0]"
NO_KEDA_GVC: Item = {**PARENT_GVC, "spec": {**PARENT_GVC["spec"], "keda": {"enabled": False}}}


def local(type_: str = "standard", defaults: dict[str, Any] | None = None, **entry: Any) -> dict[str, Any]:
    """A spec of ``type_`` with one local option ``entry`` (and ``defaults`` as defaultOptions)."""
    spec = workload(type_, localOptions=[{"location": "aws-us-east-1", **entry}])
    if defaults is not None:
        spec["defaultOptions"] = defaults
    return spec


def gpu_workload(type_: str, **fields: Any) -> dict[str, Any]:
    base = served() if type_ == "serverless" else container()
    return workload(type_, containers=[{**base, "gpu": GPU, "cpu": "2", "memory": "7Gi"}], **fields)


# --- the metric each type allows -------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "metric", "allowed"),
    [
        *[("serverless", m, True) for m in ("concurrency", "cpu", "memory", "rps", "disabled")],
        ("serverless", "latency", False),
        # concurrency: the TF provider's default metric for every type (issue 20).
        *[("standard", m, True) for m in ("concurrency", "cpu", "memory", "latency", "rps", "disabled")],
        *[("stateful", m, True) for m in ("concurrency", "cpu", "memory", "latency", "rps", "disabled")],
        # Autoscaling does not apply to cron: TF's tests send concurrency, and it is stored.
        *[("cron", m, True) for m in ("concurrency", "cpu", "memory", "rps", "latency", "disabled")],
    ],
)
def test_metric_must_fit_the_type(type_: str, metric: str, allowed: bool) -> None:
    options = {"autoscaling": {"metric": metric}, "capacityAI": False}
    assert errors_for(workload(type_, defaultOptions=options)) == ([] if allowed else [f"{AUTOSCALING}.metric"])
    if type_ != "cron":  # cron takes no local options
        local_errors = errors_for(local(type_, autoscaling={"metric": metric}, capacityAI=False))
        assert local_errors == ([] if allowed else [f"{LOCAL}.autoscaling.metric"])


def test_metric_message_lists_what_the_type_allows() -> None:
    assert pairs(write(autoscaled("serverless", metric="latency"))[1]) == [
        (
            f"{AUTOSCALING}.metric",
            "'latency' is not allowed on a serverless workload (allowed: concurrency, cpu, disabled, memory, rps)",
        )
    ]


def test_concurrency_on_standard_is_stored_as_sent() -> None:
    item, errors = write(autoscaled("standard", metric="concurrency"))
    assert errors == []
    assert item["spec"]["defaultOptions"]["autoscaling"]["metric"] == "concurrency"


# --- multi --------------------------------------------------------------------------------------


MULTI = [{"metric": "cpu", "target": 80}, {"metric": "rps", "target": 300}]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (autoscaled("standard", multi=MULTI), []),
        (autoscaled("stateful", multi=MULTI), []),
        (autoscaled("serverless", multi=MULTI), [f"{AUTOSCALING}.multi"]),
        (autoscaled("cron", multi=MULTI), [f"{AUTOSCALING}.multi"]),
        (autoscaled("standard", multi=[*MULTI, {"metric": "cpu"}]), [f"{AUTOSCALING}.multi[2].metric"]),
        (autoscaled("standard", multi=MULTI, metric="rps"), [f"{AUTOSCALING}.metric"]),
        (autoscaled("standard", multi=MULTI, target=50), [f"{AUTOSCALING}.target"]),
        (autoscaled("standard", multi=[{"metric": "cpu", "target": 101}]), [f"{AUTOSCALING}.multi[0].target"]),
        (autoscaled("standard", multi=[{"metric": "memory", "target": 150}]), [f"{AUTOSCALING}.multi[0].target"]),
        (autoscaled("standard", multi=[{"metric": "rps", "target": 20000}]), []),
        # An empty list is no multi: the metric is defaulted beside it.
        (autoscaled("standard", multi=[]), []),
        (local("serverless", autoscaling={"multi": MULTI}), [f"{LOCAL}.autoscaling.multi"]),
        (local("standard", autoscaling={"multi": MULTI, "target": 5}), [f"{LOCAL}.autoscaling.target"]),
        # A local multi replaces the default's metric and target: no conflict with them.
        (local("standard", autoscaling={"multi": MULTI}), []),
    ],
)
def test_multi_rules(spec: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(spec) == expected


# --- KEDA ---------------------------------------------------------------------------------------

TRIGGER = {"type": "redis", "metadata": {"address": "redis:6379"}}


@pytest.mark.parametrize(
    ("spec", "parent", "expected"),
    [
        (autoscaled("standard", metric="keda"), KEDA_GVC, []),
        (autoscaled("stateful", metric="keda", keda={"triggers": [TRIGGER]}), KEDA_GVC, []),
        (autoscaled("standard", metric="keda"), PARENT_GVC, [f"{AUTOSCALING}.metric"]),
        (autoscaled("standard", metric="keda"), NO_KEDA_GVC, [f"{AUTOSCALING}.metric"]),
        (autoscaled("standard", keda={"triggers": [TRIGGER]}), NO_KEDA_GVC, [f"{AUTOSCALING}.keda"]),
        (autoscaled("serverless", metric="keda"), KEDA_GVC, [f"{AUTOSCALING}.metric"]),
        (autoscaled("cron", metric="keda"), KEDA_GVC, [f"{AUTOSCALING}.metric"]),
        (autoscaled("cron", keda={}), KEDA_GVC, [f"{AUTOSCALING}.keda"]),
        (local("serverless", autoscaling={"keda": {}}), KEDA_GVC, [f"{LOCAL}.autoscaling.keda"]),
        (local("standard", autoscaling={"metric": "keda"}), PARENT_GVC, [f"{LOCAL}.autoscaling.metric"]),
        # A target beside keda is accepted (TF allows it).
        (autoscaled("standard", metric="keda", target=10), KEDA_GVC, []),
        (
            autoscaled("standard", keda={"triggers": [{**TRIGGER, "authenticationRef": {"name": "redis-auth"}}]}),
            KEDA_GVC,
            [],
        ),
        (
            autoscaled("standard", keda={"triggers": [TRIGGER, {**TRIGGER, "authenticationRef": {"name": "other"}}]}),
            KEDA_GVC,
            [f"{AUTOSCALING}.keda.triggers[1].authenticationRef.name"],
        ),
        (
            autoscaled("standard", keda={"triggers": [TRIGGER], "fallback": {"failureThreshold": 3, "replicas": 1}}),
            KEDA_GVC,
            [],
        ),
        (
            autoscaled("standard", keda={"fallback": {"failureThreshold": 3, "replicas": 1}}),
            KEDA_GVC,
            [f"{AUTOSCALING}.keda.fallback"],
        ),
        (
            autoscaled(
                "standard",
                keda={
                    "triggers": [{"type": "cpu", "metadata": {"value": "50"}}, {**TRIGGER, "metricType": "Value"}],
                    "fallback": {"failureThreshold": 3, "replicas": 1},
                },
            ),
            KEDA_GVC,
            [f"{AUTOSCALING}.keda.fallback"],
        ),
    ],
)
def test_keda_rules(spec: dict[str, Any], parent: Item, expected: list[str]) -> None:
    assert errors_for(spec, parent=parent) == expected


def test_keda_without_the_gvc_says_what_to_enable() -> None:
    assert pairs(write(autoscaled("standard", metric="keda"))[1]) == [
        (f"{AUTOSCALING}.metric", "KEDA needs the GVC's spec.keda.enabled set to true")
    ]


# --- targets and scale bounds -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (autoscaled("standard", metric="cpu", target=100), []),
        (autoscaled("standard", metric="cpu", target=101), [f"{AUTOSCALING}.target"]),
        (autoscaled("serverless", metric="memory", target=150), [f"{AUTOSCALING}.target"]),
        (autoscaled("serverless", metric="rps", target=150), []),
        (autoscaled("standard", metric="latency", target=5000), []),
        (autoscaled("cron", metric="cpu", target=101), [f"{AUTOSCALING}.target"]),
        # The metric in force for a location is the default's unless the local option names one.
        (local("standard", autoscaling={"target": 150}), [f"{LOCAL}.autoscaling.target"]),
        (local("standard", autoscaling={"metric": "rps", "target": 150}), []),
        (local("serverless", autoscaling={"target": 150}), []),
    ],
)
def test_cpu_and_memory_targets_are_percentages(spec: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(spec) == expected


@pytest.mark.parametrize(
    ("spec", "parent", "expected"),
    [
        (autoscaled("serverless", minScale=0), PARENT_GVC, []),
        (autoscaled("serverless", metric="cpu", minScale=0), PARENT_GVC, []),
        # Accepted on standard and stateful with any metric: the vendor's template catalog parks
        # workloads at minScale 0 / maxScale 0 (controlplane-com/templates; validation-audit.md).
        (autoscaled("standard", minScale=0), PARENT_GVC, []),
        (autoscaled("stateful", metric="rps", minScale=0), PARENT_GVC, []),
        (autoscaled("standard", metric="cpu", minScale=0, maxScale=0), PARENT_GVC, []),
        (autoscaled("stateful", metric="disabled", minScale=0, maxScale=0), PARENT_GVC, []),
        (autoscaled("standard", metric="keda", minScale=0), KEDA_GVC, []),
        (autoscaled("stateful", keda={}, minScale=0), KEDA_GVC, []),
        (autoscaled("cron", minScale=0, maxScale=0), PARENT_GVC, [f"{AUTOSCALING}.minScale"]),
        (local("standard", autoscaling={"minScale": 0}), PARENT_GVC, []),
        (local("cron", autoscaling={"minScale": 0, "maxScale": 0}), PARENT_GVC, [f"{LOCAL}.autoscaling.minScale"]),
        (
            local("standard", {"autoscaling": {"metric": "keda", "minScale": 0}}, autoscaling={"metric": "cpu"}),
            KEDA_GVC,
            [],
        ),
        (
            local("standard", {"autoscaling": {"metric": "keda", "minScale": 0}}, suspend=True),
            KEDA_GVC,
            [],
        ),
    ],
)
def test_min_scale_zero_follows_the_type(spec: dict[str, Any], parent: Item, expected: list[str]) -> None:
    assert errors_for(spec, parent=parent) == expected


def test_min_scale_zero_message_names_cron() -> None:
    assert pairs(write(autoscaled("cron", minScale=0, maxScale=0))[1]) == [
        (f"{AUTOSCALING}.minScale", "minScale cannot be 0 on a cron workload")
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (autoscaled("standard", minScale=3, maxScale=3), []),
        (autoscaled("standard", minScale=4, maxScale=3), [(f"{AUTOSCALING}.minScale", "must be at most maxScale (3)")]),
        (autoscaled("standard", minScale=6), [(f"{AUTOSCALING}.minScale", "must be at most maxScale (5)")]),
        (autoscaled("serverless", maxScale=0), [(f"{AUTOSCALING}.minScale", "must be at most maxScale (0)")]),
        (autoscaled("cron", minScale=6), [(f"{AUTOSCALING}.minScale", "must be at most maxScale (5)")]),
        (autoscaled("cron", maxScale=0), [(f"{AUTOSCALING}.maxScale", "must be at least minScale (1)")]),
        (
            local("standard", autoscaling={"maxScale": 0}),
            [(f"{LOCAL}.autoscaling.maxScale", "must be at least minScale (1)")],
        ),
        (
            local("standard", autoscaling={"minScale": 9}),
            [(f"{LOCAL}.autoscaling.minScale", "must be at most maxScale (5)")],
        ),
        (local("standard", autoscaling={"minScale": 9, "maxScale": 9}), []),
    ],
)
def test_min_scale_at_most_max_scale(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert pairs(write(spec)[1]) == expected


# --- Capacity AI --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (workload("standard", defaultOptions={"capacityAI": True, "autoscaling": {"metric": "cpu"}}), [DEFAULT]),
        (workload("serverless", defaultOptions={"capacityAI": True, "autoscaling": {"metric": "cpu"}}), [DEFAULT]),
        (workload("standard", defaultOptions={"capacityAI": True, "autoscaling": {"multi": MULTI}}), [DEFAULT]),
        (workload("cron", defaultOptions={"capacityAI": True, "autoscaling": {"metric": "cpu"}}), [DEFAULT]),
        (gpu_workload("serverless", defaultOptions={"capacityAI": True}), [DEFAULT]),
        (gpu_workload("cron", defaultOptions={"capacityAI": True}), [DEFAULT]),
        (workload("standard", defaultOptions={"capacityAI": True, "autoscaling": {"metric": "memory"}}), []),
        (workload("standard", defaultOptions={"capacityAI": False, "autoscaling": {"metric": "cpu"}}), []),
        (local("standard", capacityAI=True), [LOCAL]),
        (local("serverless", capacityAI=True), []),
        (local("serverless", capacityAI=True, autoscaling={"metric": "cpu"}), [LOCAL]),
        (local("standard", capacityAI=True, autoscaling={"metric": "rps"}), []),
        (gpu_workload("standard", localOptions=[{"location": "x", "capacityAI": True}]), ["spec.localOptions[0]"]),
    ],
)
def test_capacity_ai_explicitly_on_is_refused_where_it_cannot_work(spec: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(spec) == [f"{path}.capacityAI" for path in expected]


def test_capacity_ai_message_gives_the_reason() -> None:
    assert pairs(write(gpu_workload("standard", defaultOptions={"capacityAI": True}))[1]) == [
        (f"{DEFAULT}.capacityAI", "cannot be true when a container uses a GPU")
    ]


# --- type-level blocks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"type": "cron", "containers": [container()]}, [("spec.job", "is required on a cron workload")]),
        (workload("standard", job={"schedule": "@daily"}), [("spec.job", "is only allowed on a cron workload")]),
        (workload("serverless", job={"schedule": "@daily"}), [("spec.job", "is only allowed on a cron workload")]),
        (workload("standard", vm={"cpu": {}}), [("spec.vm", "is only allowed on a vm workload")]),
        (
            workload("vm", containers=[{"name": "vm"}], vm={}),
            [("spec.type", "'vm' workloads are not served by Plinth yet")],
        ),
        # Accepted: the vendor's template catalog un-suspends one location of a cron this way
        # (controlplane-com/templates; docs/validation-audit.md).
        (workload("cron", localOptions=[{"location": "aws-us-east-1", "suspend": True}]), []),
        (workload("cron", localOptions=[]), []),
        # Stored on stateful, where it means nothing (issue 20: the vendor's stateful stacks send it).
        (workload("stateful", rolloutOptions={"maxUnavailableReplicas": "1"}), []),
        (workload("stateful", rolloutOptions={"maxUnavailableReplicas": "0", "maxSurgeReplicas": "0"}), []),
        (workload("stateful", rolloutOptions={"maxSurgeReplicas": "1"}), []),
        (workload("cron", rolloutOptions={"maxUnavailableReplicas": "1"}), []),
        (
            workload("standard", rolloutOptions={"maxUnavailableReplicas": "0", "maxSurgeReplicas": "0%"}),
            [("spec.rolloutOptions.maxUnavailableReplicas", "must not be 0 when maxSurgeReplicas is 0 too")],
        ),
        (workload("standard", rolloutOptions={"maxUnavailableReplicas": "0", "maxSurgeReplicas": "1"}), []),
        (workload("standard", rolloutOptions={"terminationGracePeriodSeconds": 900}), []),
        (
            workload("standard", rolloutOptions={"terminationGracePeriodSeconds": 901}),
            [
                (
                    "spec.rolloutOptions.terminationGracePeriodSeconds",
                    "must be at most 900 unless the workload is tagged cpln/relaxGracePeriodMax",
                )
            ],
        ),
    ],
)
def test_type_level_rules(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert pairs(write(spec)[1]) == expected


@pytest.mark.parametrize(("value", "allowed"), [("true", True), (True, True), ("false", False), (False, False)])
def test_relax_grace_period_tag_lifts_the_cap(value: Any, allowed: bool) -> None:
    """The tag is the integration's to make client-settable; the rule reads the candidate's tags."""
    item = stored(workload("standard", rolloutOptions={"terminationGracePeriodSeconds": 600}))
    item["spec"]["rolloutOptions"]["terminationGracePeriodSeconds"] = 3600
    item["tags"] = {"cpln/relaxGracePeriodMax": value}
    paths_found = [error.path for error in validate_workload(item, None, context())]
    assert paths_found == ([] if allowed else ["spec.rolloutOptions.terminationGracePeriodSeconds"])


@pytest.mark.parametrize("type_", ["standard", "serverless", "cron"])
def test_replica_direct_is_stateful_only(type_: str) -> None:
    assert errors_for(workload(type_, loadBalancer={"replicaDirect": True})) == ["spec.loadBalancer.replicaDirect"]
    assert errors_for(workload(type_, loadBalancer={"replicaDirect": False})) == []
    assert errors_for(workload("stateful", loadBalancer={"replicaDirect": True})) == []


@pytest.mark.parametrize(
    ("geo", "expected"),
    [
        ({"enabled": True, "headers": {"country": "x-country"}}, []),
        ({"enabled": False}, []),
        ({"enabled": True}, ["spec.loadBalancer.geoLocation.headers"]),
        ({"enabled": True, "headers": {}}, ["spec.loadBalancer.geoLocation.headers"]),
        (
            {"enabled": False, "headers": {"city": "x-geo", "region": "X-Geo"}},
            ["spec.loadBalancer.geoLocation.headers.region"],
        ),
        (
            {"enabled": True, "headers": {"asn": "a", "city": "a", "country": "b", "region": "A"}},
            ["spec.loadBalancer.geoLocation.headers.city", "spec.loadBalancer.geoLocation.headers.region"],
        ),
    ],
)
def test_geo_location_headers(geo: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(workload("standard", loadBalancer={"geoLocation": geo})) == expected


@pytest.mark.parametrize(
    ("header_filter", "ok"),
    [
        ({"key": "x-a", "allowedValues": ["^a$"]}, True),
        ({"key": "x-a", "blockedValues": []}, True),
        ({"key": "x-a"}, False),
        ({"key": "x-a", "allowedValues": ["a"], "blockedValues": ["b"]}, False),
    ],
)
def test_header_filter_takes_exactly_one_value_list(header_filter: dict[str, Any], ok: bool) -> None:
    firewall = {"external": {"http": {"inboundHeaderFilter": [{"key": "x-ok", "allowedValues": []}, header_filter]}}}
    expected = [] if ok else ["spec.firewallConfig.external.http.inboundHeaderFilter[1]"]
    assert errors_for(workload("standard", firewallConfig=firewall)) == expected


@pytest.mark.parametrize(
    ("locations", "expected"),
    [
        (["aws-us-east-1", "gcp-us-east1"], []),
        (["aws-us-east-1", "aws-us-east-1"], ["spec.localOptions[1].location"]),
        (["//location/aws-us-east-1", "/org/acme/location/aws-us-east-1"], ["spec.localOptions[1].location"]),
        (
            ["aws-us-east-1", "gcp-us-east1", "/org/acme/location/aws-us-east-1", "//location/gcp-us-east1"],
            ["spec.localOptions[2].location", "spec.localOptions[3].location"],
        ),
    ],
)
def test_each_location_has_one_local_option(locations: list[str], expected: list[str]) -> None:
    spec = workload("standard", localOptions=[{"location": location} for location in locations])
    assert errors_for(spec) == expected


def test_duplicate_location_message_points_at_the_first() -> None:
    spec = workload("standard", localOptions=[{"location": "a-1"}, {"location": "b-1"}, {"location": "//location/a-1"}])
    assert pairs(write(spec)[1]) == [("spec.localOptions[2].location", "'a-1' already has options at localOptions[0]")]


def test_cron_keeps_default_options_tf_sends() -> None:
    """TF creates cron workloads with defaultOptions (and capacityAI false); never refused."""
    spec = workload(
        "cron",
        defaultOptions={"autoscaling": {"metric": "concurrency", "minScale": 1, "maxScale": 1}, "capacityAI": False},
    )
    assert errors_for(spec) == []


# --- the name rule ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("web", None),
        ("a" * 49, None),
        ("a" * 50, "must be at most 49 characters"),
        ("web-headless", "must not end with '-headless'"),
        ("headless", None),
        ("web-headless-2", None),
        ("Web", "must match"),
        ("a" * 65, "must be at most 64 characters"),
    ],
)
def test_workload_name_rule(name: str, problem: str | None) -> None:
    found = workload_name_rule(name)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found
