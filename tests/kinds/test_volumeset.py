"""The volumeset kind, driven through the engine's own write pipeline (build_candidate)."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest

from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.errors import FieldError
from plinth.kinds import REGISTRY
from plinth.kinds.base import Item, KindContext, ReadsLinked
from plinth.kinds.quantity import parse_quantity
from plinth.kinds.volumeset import VOLUMESET

PARENT: Item = {
    "id": "5d9c0c52-8d5e-4f0b-9d43-1c7a52f0e111",
    "name": "main",
    "spec": {
        "staticPlacement": {
            "locationLinks": [
                "//location/aws-us-east-1",
                "/org/acme/location/gcp-us-east1",
                "/org/acme/location/aws-us-east-1",
            ]
        }
    },
}
CTX = KindContext(org="acme", now="2026-01-01T00:00:00.000Z", gvc="main", parent=PARENT)


def write(
    spec: Any = None, *, body: dict[str, Any] | None = None, old: Item | None = None, name: str = "data"
) -> tuple[Item, list[FieldError]]:
    """Run one volume set write as the engine does: strip server-owned fields, then build."""
    full = {"spec": spec} if body is None else body
    return build_candidate(VOLUMESET, strip_server_owned(VOLUMESET, full), old, CTX, name)


def paths(errors: list[FieldError]) -> list[str]:
    return [error.path for error in errors]


def errors_for(spec: dict[str, Any]) -> list[str]:
    return paths(write(spec)[1])


def shared(**extra: Any) -> dict[str, Any]:
    return {"initialCapacity": 10, "fileSystemType": "shared", **extra}


def ssd(**extra: Any) -> dict[str, Any]:
    return {"initialCapacity": 100, **extra}


MAXIMAL_SPEC: dict[str, Any] = {
    "initialCapacity": 500,
    "performanceClass": "high-throughput-ssd",
    "fileSystemType": "xfs",
    "storageClassSuffix": "fast_Tier-2",
    "customEncryption": {"regions": {"aws-us-east-1": {"keyId": "arn:aws:kms:us-east-1:1:key/k"}}},
    "snapshots": {"createFinalSnapshot": False, "retentionDuration": "7d", "schedule": "15 */6 * * mon-fri"},
    "autoscaling": {
        "maxCapacity": 2000,
        "minFreePercentage": 20,
        "scalingFactor": 1.5,
        "predictive": {
            "enabled": True,
            "lookbackHours": 48.0,
            "projectionHours": 12.0,
            "minDataPoints": 20,
            "minGrowthRateGBPerHour": 0.5,
            "scalingFactor": 2.0,
        },
    },
}


# --- defaults and stored shape --------------------------------------------------------------


def test_minimal_volumeset_gets_class_and_file_system_defaults() -> None:
    item, errors = write({"initialCapacity": 10})
    assert errors == []
    assert item == {
        "kind": "volumeset",
        "name": "data",
        "gvc": "main",
        "description": "data",
        "tags": {},
        "spec": {"initialCapacity": 10, "performanceClass": "general-purpose-ssd", "fileSystemType": "ext4"},
    }
    assert list(item["spec"]) == ["initialCapacity", "performanceClass", "fileSystemType"]


def test_maximal_volumeset_is_stored_exactly_as_sent() -> None:
    item, errors = write(copy.deepcopy(MAXIMAL_SPEC))
    assert errors == []
    assert item["spec"] == MAXIMAL_SPEC


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ({}, ("general-purpose-ssd", "ext4")),
        ({"fileSystemType": "xfs"}, ("general-purpose-ssd", "xfs")),
        ({"fileSystemType": "shared"}, ("shared", "shared")),
        ({"performanceClass": "shared"}, ("shared", "shared")),
        ({"performanceClass": "high-throughput-ssd"}, ("high-throughput-ssd", "ext4")),
        ({"performanceClass": "general-purpose-ssd", "fileSystemType": "xfs"}, ("general-purpose-ssd", "xfs")),
    ],
)
def test_class_and_file_system_defaults_follow_each_other(sent: dict[str, str], stored: tuple[str, str]) -> None:
    item, errors = write({"initialCapacity": 200, **sent})
    assert errors == []
    assert (item["spec"]["performanceClass"], item["spec"]["fileSystemType"]) == stored


def test_snapshot_and_predictive_defaults_fill_only_sent_blocks() -> None:
    item, _ = write(ssd(snapshots={}, autoscaling={"predictive": {}}))
    assert item["spec"]["snapshots"] == {"createFinalSnapshot": True}
    assert item["spec"]["autoscaling"] == {
        "predictive": {
            "enabled": False,
            "lookbackHours": 24.0,
            "projectionHours": 6.0,
            "minDataPoints": 10,
            "minGrowthRateGBPerHour": 0.01,
        }
    }
    item, _ = write(ssd())
    assert {"snapshots", "autoscaling", "mountOptions", "customEncryption"}.isdisjoint(item["spec"])


def test_predictive_scaling_factor_defaults_to_the_enclosing_one() -> None:
    item, _ = write(ssd(autoscaling={"scalingFactor": 1.3, "predictive": {"enabled": True}}))
    assert item["spec"]["autoscaling"]["predictive"]["scalingFactor"] == 1.3
    item, _ = write(ssd(autoscaling={"scalingFactor": 1.3, "predictive": {"scalingFactor": 3}}))
    assert item["spec"]["autoscaling"]["predictive"]["scalingFactor"] == 3.0


def test_shared_mount_resources_get_defaults_for_what_is_missing() -> None:
    item, errors = write(shared(mountOptions={}))
    assert errors == []
    assert item["spec"]["mountOptions"] == {
        "resources": {"minCpu": "500m", "maxCpu": "2000m", "minMemory": "1Gi", "maxMemory": "2Gi"}
    }
    item, errors = write(shared(mountOptions={"resources": {"maxCpu": "1", "minMemory": "512Mi"}}))
    assert errors == []
    assert item["spec"]["mountOptions"]["resources"] == {
        "minCpu": "500m",
        "maxCpu": "1",
        "minMemory": "512Mi",
        "maxMemory": "2Gi",
    }


# --- declaration and status -----------------------------------------------------------------


def test_declaration() -> None:
    assert REGISTRY["volumeset"] is VOLUMESET
    assert (VOLUMESET.scope, VOLUMESET.presentation.title) == ("gvc", "VolumeSet")
    assert VOLUMESET.schema.immutable == ("spec.performanceClass", "spec.fileSystemType")
    assert VOLUMESET.status.reads(ReadsLinked) == (ReadsLinked(frozenset({"gvc"})),)
    assert {"id", "name", "gvc", "spec.performanceClass"} <= set(VOLUMESET.presentation.query_properties)


@pytest.mark.parametrize(("spec", "desired"), [(ssd(), 0), (shared(), 1)])
def test_status_lists_each_parent_location_once(spec: dict[str, Any], desired: int) -> None:
    item, _ = write(spec)
    assert VOLUMESET.status.compute(item, CTX) == {
        "parentId": PARENT["id"],
        "locations": [
            {"name": "aws-us-east-1", "volumes": [], "desiredVolumeCount": desired},
            {"name": "gcp-us-east1", "volumes": [], "desiredVolumeCount": desired},
        ],
        "workloadLinks": [],
    }


def test_status_of_a_set_in_an_unplaced_gvc_has_no_locations() -> None:
    item, _ = write(ssd())
    ctx = KindContext(org="acme", now=CTX.now, gvc="main", parent={"id": "g2", "name": "main", "spec": {}})
    assert VOLUMESET.status.compute(item, ctx) == {"parentId": "g2", "locations": [], "workloadLinks": []}


# --- enums, bounds and syntax ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("performance_class", "capacity", "ok"),
    [
        ("general-purpose-ssd", 9, False),
        ("general-purpose-ssd", 10, True),
        ("high-throughput-ssd", 199, False),
        ("high-throughput-ssd", 200, True),
        ("shared", 9, False),
        ("shared", 10, True),
        ("general-purpose-ssd", 65536, True),
        ("high-throughput-ssd", 65537, False),
        ("shared", 65537, False),
    ],
)
def test_initial_capacity_per_class(performance_class: str, capacity: int, ok: bool) -> None:
    errors = errors_for({"initialCapacity": capacity, "performanceClass": performance_class})
    assert errors == ([] if ok else ["spec.initialCapacity"])


def test_class_minimum_message_names_the_class() -> None:
    _, errors = write({"initialCapacity": 150, "performanceClass": "high-throughput-ssd"})
    assert errors[0].message == "must be at least 200 (GB) for performance class high-throughput-ssd"


@pytest.mark.parametrize("capacity", ["100", 100.5, True, None])
def test_initial_capacity_is_a_required_integer(capacity: Any) -> None:
    spec = {} if capacity is None else {"initialCapacity": capacity}
    assert errors_for(spec) == ["spec.initialCapacity"]


def test_spec_is_required() -> None:
    _, errors = write(body={"description": "no spec"})
    assert [(e.path, e.message) for e in errors] == [("spec", "is required")]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("performanceClass", "fast-ssd"),
        ("performanceClass", "Shared"),
        ("fileSystemType", "zfs"),
        ("fileSystemType", "EXT4"),
    ],
)
def test_unknown_enum_values(field: str, value: str) -> None:
    assert errors_for(ssd(**{field: value})) == [f"spec.{field}"]


@pytest.mark.parametrize(
    ("suffix", "ok"),
    [
        ("a", True),
        ("fast_Tier-2", True),
        ("Z9", True),
        ("", False),
        ("9a", False),
        ("-a", False),
        ("a.b", False),
        ("a b", False),
    ],
)
def test_storage_class_suffix_pattern(suffix: str, ok: bool) -> None:
    assert errors_for(ssd(storageClassSuffix=suffix)) == ([] if ok else ["spec.storageClassSuffix"])


@pytest.mark.parametrize(
    ("duration", "ok"),
    [
        ("7d", True),
        ("12h", True),
        ("30m", True),
        ("1.5d", True),
        ("7", False),
        ("d", False),
        ("7s", False),
        ("1.d", False),
        (".5d", False),
        ("7d\n", False),
        ("-1d", False),
    ],
)
def test_snapshot_retention_duration(duration: str, ok: bool) -> None:
    assert errors_for(ssd(snapshots={"retentionDuration": duration})) == (
        [] if ok else ["spec.snapshots.retentionDuration"]
    )


@pytest.mark.parametrize(
    "schedule",
    ["0 * * * *", "59 23 31 12 7", "15 2 * * mon-fri", "0 */6 1,15 jan-jun 0-7", "5 1-23/2 * DEC SUN", "00 0 1 1 0"],
)
def test_valid_snapshot_schedules(schedule: str) -> None:
    assert errors_for(ssd(snapshots={"schedule": schedule})) == []


@pytest.mark.parametrize(
    ("schedule", "hint"),
    [
        ("* * * * *", "minute"),
        ("*/5 * * * *", "minute"),
        ("0,30 * * * *", "minute"),
        ("0-5 * * * *", "minute"),
        ("60 * * * *", "minute"),
        ("0 24 * * *", "hour"),
        ("0 * 0 * *", "day-of-month"),
        ("0 * 32 * *", "day-of-month"),
        ("0 * * 13 *", "month"),
        ("0 * * * 8", "day-of-week"),
        ("0 * * * funday", "day-of-week"),
        ("0 5-1 * * *", "hour"),
        ("0 */0 * * *", "hour"),
        ("0 1/2 * * *", "hour"),
        ("0 1,,2 * * *", "hour"),
        ("0 * * *", "5 fields"),
        ("0 * * * * *", "5 fields"),
        ("@hourly", "5 fields"),
        ("0 ² * * *", "hour"),
    ],
)
def test_invalid_snapshot_schedules(schedule: str, hint: str) -> None:
    _, errors = write(ssd(snapshots={"schedule": schedule}))
    assert paths(errors) == ["spec.snapshots.schedule"]
    assert hint in errors[0].message


@pytest.mark.parametrize(
    ("autoscaling", "expected"),
    [
        ({"maxCapacity": 9}, ["spec.autoscaling.maxCapacity"]),
        ({"maxCapacity": 65537}, ["spec.autoscaling.maxCapacity"]),
        ({"maxCapacity": 100}, []),
        ({"minFreePercentage": 0}, ["spec.autoscaling.minFreePercentage"]),
        ({"minFreePercentage": 1}, []),
        ({"minFreePercentage": 100}, []),
        ({"minFreePercentage": 101}, ["spec.autoscaling.minFreePercentage"]),
        ({"scalingFactor": 1.09}, ["spec.autoscaling.scalingFactor"]),
        ({"scalingFactor": 1.1}, []),
        ({"scalingFactor": 2}, []),
    ],
)
def test_autoscaling_bounds(autoscaling: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(ssd(autoscaling=autoscaling)) == expected


@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("lookbackHours", 0.9, False),
        ("lookbackHours", 1, True),
        ("lookbackHours", 168, True),
        ("lookbackHours", 168.5, False),
        ("projectionHours", 0, False),
        ("projectionHours", 1, True),
        ("projectionHours", 72, True),
        ("projectionHours", 72.1, False),
        ("minDataPoints", 1, False),
        ("minDataPoints", 2, True),
        ("minDataPoints", 100, True),
        ("minDataPoints", 101, False),
        ("minDataPoints", 2.5, False),
        ("minGrowthRateGBPerHour", -0.01, False),
        ("minGrowthRateGBPerHour", 0, True),
        ("scalingFactor", 1.0, False),
        ("scalingFactor", 1.1, True),
        ("enabled", "yes", False),
        ("enabled", True, True),
    ],
)
def test_predictive_bounds(field: str, value: Any, ok: bool) -> None:
    errors = errors_for(ssd(autoscaling={"predictive": {field: value}}))
    assert errors == ([] if ok else [f"spec.autoscaling.predictive.{field}"])


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Decimal("0.5")),
        ("2", Decimal(2)),
        ("1.5", Decimal("1.5")),
        (".5", Decimal("0.5")),
        ("1Gi", Decimal(1024**3)),
        ("512Mi", Decimal(512 * 1024**2)),
        ("1k", Decimal(1000)),
        ("1e3", Decimal(1000)),
        ("1E", Decimal(10**18)),
        ("2M", Decimal(2 * 10**6)),
    ],
)
def test_quantities_parse_exactly(text: str, value: Decimal) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "abc", "-1", "1Gb", "1 Gi", "1Gi\n", "m", "1.2.3"])
def test_not_quantities(text: str) -> None:
    assert parse_quantity(text) is None


# --- cross-field rules ----------------------------------------------------------------------


def test_shared_file_system_and_shared_class_go_together() -> None:
    _, errors = write({"initialCapacity": 10, "fileSystemType": "shared", "performanceClass": "general-purpose-ssd"})
    assert [(e.path, e.message) for e in errors] == [
        ("spec.performanceClass", "must be 'shared' when fileSystemType is 'shared'")
    ]
    _, errors = write({"initialCapacity": 10, "fileSystemType": "xfs", "performanceClass": "shared"})
    assert [(e.path, e.message) for e in errors] == [
        ("spec.fileSystemType", "must be 'shared' when performanceClass is 'shared'")
    ]


@pytest.mark.parametrize(("max_capacity", "ok"), [(99, False), (100, True), (101, True)])
def test_autoscaling_ceiling_is_at_least_the_initial_capacity(max_capacity: int, ok: bool) -> None:
    assert errors_for(ssd(autoscaling={"maxCapacity": max_capacity})) == (
        [] if ok else ["spec.autoscaling.maxCapacity"]
    )


def test_shared_sets_take_no_encryption_or_snapshots() -> None:
    spec = shared(customEncryption={"regions": {"aws-us-east-1": {"keyId": "k"}}}, snapshots={})
    assert errors_for(spec) == ["spec.customEncryption", "spec.snapshots"]


def test_only_shared_sets_take_mount_options() -> None:
    assert errors_for(ssd(mountOptions={"resources": {"minCpu": "1"}})) == ["spec.mountOptions"]


def test_encryption_keys_need_a_key_id() -> None:
    assert errors_for(ssd(customEncryption={"regions": {"aws-eu-west-1": {}}})) == [
        "spec.customEncryption.regions.aws-eu-west-1.keyId"
    ]


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ({"minCpu": "2", "maxCpu": "6"}, []),
        ({"minCpu": "1", "maxCpu": "4"}, []),
        ({"minMemory": "1Gi", "maxMemory": "4Gi"}, []),
        ({"minMemory": "2Gi", "maxMemory": "6Gi"}, []),
        ({"minCpu": "2", "maxCpu": "6001m"}, ["maxCpu"]),
        ({"minCpu": "100m", "maxCpu": "401m"}, ["maxCpu"]),
        ({"minCpu": "1", "maxCpu": "500m"}, ["maxCpu"]),
        ({"minMemory": "2Gi", "maxMemory": "6145Mi"}, ["maxMemory"]),
        ({"minMemory": "256Mi", "maxMemory": "1025Mi"}, ["maxMemory"]),
        ({"minCpu": "0", "maxCpu": "0"}, ["minCpu", "maxCpu"]),
        ({"minMemory": "0"}, ["minMemory"]),
        ({"minCpu": "one"}, ["minCpu"]),
        ({"maxMemory": "2GB"}, ["maxMemory"]),
    ],
)
def test_mount_resource_ranges(resources: dict[str, str], expected: list[str]) -> None:
    errors = errors_for(shared(mountOptions={"resources": resources}))
    assert errors == [f"spec.mountOptions.resources.{key}" for key in expected]


# --- updates, several errors, envelope ------------------------------------------------------


def test_class_and_file_system_cannot_change_but_may_be_left_out() -> None:
    created, _ = write(ssd())
    _, errors = write({"initialCapacity": 300, "performanceClass": "high-throughput-ssd"}, old=created)
    assert [(e.path, e.message) for e in errors] == [("spec.performanceClass", "cannot be changed after creation")]
    _, errors = write(ssd(fileSystemType="xfs"), old=created)
    assert paths(errors) == ["spec.fileSystemType"]
    updated, errors = write({"initialCapacity": 120}, old=created)
    assert errors == []
    assert updated["spec"] == {
        "initialCapacity": 120,
        "performanceClass": "general-purpose-ssd",
        "fileSystemType": "ext4",
    }


def test_a_shared_set_stays_shared_when_an_update_names_only_one_side() -> None:
    created, _ = write(shared())
    _, errors = write({"initialCapacity": 20, "performanceClass": "shared"}, old=created)
    assert errors == []


def test_several_schema_errors_come_together_with_their_paths() -> None:
    spec = {
        "initialCapacity": 5,
        "fileSystemType": "btrfs",
        "snapshots": {"schedule": "* * * * *", "keep": 3},
        "autoscaling": {"minFreePercentage": 0, "predictive": {"lookbackHours": 200, "unknown": 1}},
    }
    assert sorted(errors_for(spec)) == sorted(
        [
            "spec.initialCapacity",
            "spec.fileSystemType",
            "spec.snapshots.schedule",
            "spec.snapshots.keep",
            "spec.autoscaling.minFreePercentage",
            "spec.autoscaling.predictive.lookbackHours",
            "spec.autoscaling.predictive.unknown",
        ]
    )


def test_several_rule_errors_come_together() -> None:
    spec = {
        "initialCapacity": 150,
        "performanceClass": "high-throughput-ssd",
        "autoscaling": {"maxCapacity": 100},
        "mountOptions": {},
    }
    assert errors_for(spec) == ["spec.initialCapacity", "spec.autoscaling.maxCapacity", "spec.mountOptions"]


@pytest.mark.parametrize(("gvc", "ok"), [("main", True), ("/org/acme/gvc/main", True), ("other", False)])
def test_top_level_gvc_must_match_the_path(gvc: str, ok: bool) -> None:
    _, errors = write(body={"gvc": gvc, "spec": ssd()})
    assert paths(errors) == ([] if ok else ["gvc"])


def test_name_rule_and_unknown_top_level_fields() -> None:
    _, errors = write(body={"spec": ssd(), "volumes": []}, name="Data")
    assert sorted(paths(errors)) == ["name", "volumes"]
