"""Workload containers: rules across fields and containers, the type matrix, every error at once."""

from __future__ import annotations

from typing import Any

import pytest
from _workload_container_support import CTX, container, errors_for, pairs, tagged_write, workload, write

from plinth.kinds.workload.containers import container_errors

C0, C1 = "spec.containers[0]", "spec.containers[1]"
CRON_JOB = {"schedule": "*/5 * * * *"}


# --- image and names ------------------------------------------------------------------------


def test_image_is_required_outside_vm() -> None:
    _, errors = write(workload({"name": "app"}, container("side")))
    assert pairs(errors) == [(f"{C0}.image", "is required")]


def test_container_names_are_unique() -> None:
    _, errors = write(workload(container("app"), container("side"), container("app"), container("side")))
    assert pairs(errors) == [
        ("spec.containers[2].name", "'app' is already the name of spec.containers[0]"),
        ("spec.containers[3].name", "'side' is already the name of spec.containers[1]"),
    ]


# --- ports across containers and the type matrix --------------------------------------------


def test_port_numbers_are_unique_across_containers() -> None:
    spec = workload(
        container("app", ports=[{"number": 8080}, {"number": 9000}]),
        container("side", ports=[{"number": 9001}, {"number": 8080, "protocol": "tcp"}]),
    )
    assert pairs(write(spec)[1]) == [
        (f"{C1}.ports[1].number", f"port 8080 is already exposed by {C0}.ports[0]"),
    ]


def test_port_numbers_are_unique_within_a_container() -> None:
    spec = workload(container(ports=[{"number": 8080}, {"number": 8080, "protocol": "grpc"}]))
    assert errors_for(spec) == [f"{C0}.ports[1].number"]


def test_legacy_port_counts_for_uniqueness() -> None:
    spec = workload(container("app", port=8080), container("side", ports=[{"number": 9000}, {"number": 8080}]))
    assert pairs(write(spec)[1]) == [(f"{C1}.ports[1].number", f"port 8080 is already exposed by {C0}.ports[0]")]


def test_legacy_port_repeating_its_own_ports_entry_is_not_a_duplicate() -> None:
    assert errors_for(workload(container(port=8080, ports=[{"number": 8080}]))) == []


@pytest.mark.parametrize("workload_type", ["standard", "stateful"])
def test_standard_and_stateful_take_any_number_of_ports(workload_type: str) -> None:
    assert errors_for(workload(container(), type=workload_type)) == []
    spec = workload(
        container("app", ports=[{"number": 80}, {"number": 443}]),
        container("side", ports=[{"number": 5432, "protocol": "tcp"}]),
        type=workload_type,
    )
    assert errors_for(spec) == []


def test_serverless_exposes_exactly_one_port() -> None:
    assert errors_for(workload(container(ports=[{"number": 8080}]), type="serverless")) == []
    assert errors_for(workload(container(port=8080), container("side"), type="serverless")) == []
    _, errors = write(workload(container(), container("side"), type="serverless"))
    message = "a serverless workload must expose exactly one port, on one container"
    assert pairs(errors) == [("spec.containers", message)]


def test_serverless_refuses_every_port_beyond_the_first() -> None:
    spec = workload(
        container("app", ports=[{"number": 8080}, {"number": 8081}]),
        container("side", ports=[{"number": 9000}]),
        type="serverless",
    )
    message = "a serverless workload exposes exactly one port, on one container; remove this one"
    assert pairs(write(spec)[1]) == [(f"{C0}.ports[1]", message), (f"{C1}.ports[0]", message)]


def test_cron_ports_are_accepted_and_kept() -> None:
    """The vendor's TF acceptance tests create cron workloads with ports (TF resource_workload_test.go,
    ``CronUpdate1Hcl``)."""
    ports = [{"protocol": "http", "number": 80}, {"protocol": "http2", "number": 8080}]
    item, errors = write(workload(container(ports=ports), type="cron", job=CRON_JOB))
    assert errors == []
    assert item["spec"]["containers"][0]["ports"] == ports


# --- compute --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cpu", "memory", "expected"),
    [
        ("25m", "32Mi", []),
        ("24m", "32Mi", [(f"{C0}.cpu", "must be at least 25m")]),
        ("0.024", "32Mi", [(f"{C0}.cpu", "must be at least 25m")]),
        ("25m", "31Mi", [(f"{C0}.memory", "must be at least 32Mi")]),
        ("25m", "33554431", [(f"{C0}.memory", "must be at least 32Mi")]),
        ("25m", "33554432", []),
    ],
)
def test_cpu_and_memory_floors(cpu: str, memory: str, expected: list[tuple[str, str]]) -> None:
    assert pairs(write(workload(container(cpu=cpu, memory=memory)))[1]) == expected


@pytest.mark.parametrize(
    ("cpu", "memory", "ok"),
    [
        ("50m", "128Mi", True),
        ("50m", "400Mi", True),
        ("50m", "401Mi", False),
        ("256m", "2Gi", True),
        ("255m", "2Gi", False),
        ("1", "8000Mi", True),
        ("1", "8001Mi", False),
        ("1", "8Gi", False),
        ("0.128", "1Gi", True),
        ("0.127", "1Gi", False),
    ],
)
def test_memory_to_cpu_ratio_is_at_most_eight(cpu: str, memory: str, ok: bool) -> None:
    assert errors_for(workload(container(cpu=cpu, memory=memory))) == ([] if ok else [f"{C0}.memory"])


def test_ratio_message_names_the_cpu_needed_and_the_tag() -> None:
    _, errors = write(workload(container(cpu="50m", memory="2Gi")))
    assert pairs(errors) == [
        (
            f"{C0}.memory",
            "memory in Mi may be at most 8 times cpu in millicores: 2Gi needs cpu of at least 256m, "
            "or tag the workload cpln/relaxMemoryToCpuRatio to allow 32",
        )
    ]


@pytest.mark.parametrize(
    ("tag", "memory", "ok"),
    [
        ("true", "1600Mi", True),
        (True, "1600Mi", True),
        ("yes", "1600Mi", True),
        ("true", "1601Mi", False),
        ("false", "401Mi", False),
        (False, "401Mi", False),
    ],
)
def test_relax_tag_raises_the_ratio_to_thirty_two(tag: Any, memory: str, ok: bool) -> None:
    _, errors = tagged_write(workload(container(cpu="50m", memory=memory)), {"cpln/relaxMemoryToCpuRatio": tag})
    assert [e.path for e in errors] == ([] if ok else [f"{C0}.memory"])
    if not ok and tag in ("true", True):
        assert errors[0].message == (
            "memory in Mi may be at most 32 times cpu in millicores: 1601Mi needs cpu of at least 51m"
        )


@pytest.mark.parametrize("workload_type", ["standard", "serverless", "cron"])
@pytest.mark.parametrize(
    ("minimums", "expected"),
    [
        ({"minCpu": "1", "minMemory": "1Gi"}, []),
        ({"minCpu": "1001m"}, [(f"{C0}.minCpu", "must be at most cpu (1)")]),
        ({"minMemory": "1025Mi"}, [(f"{C0}.minMemory", "must be at most memory (1Gi)")]),
        ({"minCpu": "25m", "minMemory": "32Mi"}, []),
    ],
)
def test_minimums_are_at_most_the_maximums(
    workload_type: str, minimums: dict[str, str], expected: list[tuple[str, str]]
) -> None:
    extra = {"job": CRON_JOB} if workload_type == "cron" else {}
    ports = [{"number": 8080}]
    spec = workload(container(cpu="1", memory="1Gi", ports=ports, **minimums), type=workload_type, **extra)
    assert pairs(write(spec)[1]) == expected


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ({"cpu": "8", "minCpu": "4", "memory": "8Gi", "minMemory": "4Gi"}, []),
        ({"cpu": "8", "minCpu": "3999m"}, [(f"{C0}.minCpu", "must be within 4000m of cpu on a stateful workload")]),
        (
            {"cpu": "2", "memory": "8Gi", "minMemory": "4095Mi"},
            [(f"{C0}.minMemory", "must be within 4096Mi of memory on a stateful workload")],
        ),
        ({"cpu": "1", "minCpu": "250m"}, []),
        (
            {"cpu": "1", "minCpu": "249m"},
            [(f"{C0}.minCpu", "must be at least a quarter of cpu on a stateful workload")],
        ),
        ({"cpu": "1", "memory": "1Gi", "minMemory": "256Mi"}, []),
        (
            {"cpu": "1", "memory": "1Gi", "minMemory": "255Mi"},
            [(f"{C0}.minMemory", "must be at least a quarter of memory on a stateful workload")],
        ),
        ({"cpu": "1", "minCpu": "0"}, [(f"{C0}.minCpu", "must be at least a quarter of cpu on a stateful workload")]),
    ],
)
def test_stateful_minimums_stay_close_to_the_maximums(
    resources: dict[str, str], expected: list[tuple[str, str]]
) -> None:
    assert pairs(write(workload(container(**resources), type="stateful"))[1]) == expected
    # The same amounts are fine on a standard workload, where the minimums are Capacity AI floors.
    assert pairs(write(workload(container(**resources)))[1]) == []


# --- GPU ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "quantity", "message"),
    [
        ("t4", 1, None),
        ("t4", 4, None),
        ("a10g", 1, None),
        ("a10g", 2, "must be exactly 1 for model a10g"),
        ("a10g", 4, "must be exactly 1 for model a10g"),
    ],
)
def test_nvidia_quantity_per_model(model: str, quantity: int, message: str | None) -> None:
    gpu = {"nvidia": {"model": model, "quantity": quantity}}
    _, errors = write(workload(container(gpu=gpu, cpu="2", memory="7Gi")))
    assert pairs(errors) == ([] if message is None else [(f"{C0}.gpu.nvidia.quantity", message)])


@pytest.mark.parametrize(
    ("cpu", "memory", "expected"),
    [
        ("2", "7Gi", []),
        ("2000m", "7000Mi", []),
        ("1999m", "7Gi", [(f"{C0}.cpu", "must be at least 2 (cores) with an nvidia GPU")]),
        ("2", "6999Mi", [(f"{C0}.memory", "must be at least 7Gi (7000Mi) with an nvidia GPU")]),
        (
            "1",
            "4Gi",
            [
                (f"{C0}.cpu", "must be at least 2 (cores) with an nvidia GPU"),
                (f"{C0}.memory", "must be at least 7Gi (7000Mi) with an nvidia GPU"),
            ],
        ),
    ],
)
def test_nvidia_needs_two_cores_and_seven_gigabytes(cpu: str, memory: str, expected: list[tuple[str, str]]) -> None:
    gpu = {"nvidia": {"model": "t4", "quantity": 1}}
    assert pairs(write(workload(container(gpu=gpu, cpu=cpu, memory=memory)))[1]) == expected


def test_nvidia_with_the_default_resources_is_refused() -> None:
    assert errors_for(workload(container(gpu={"nvidia": {"model": "t4", "quantity": 1}}))) == [
        f"{C0}.cpu",
        f"{C0}.memory",
    ]


def test_custom_gpu_has_no_sizing_floor() -> None:
    assert errors_for(workload(container(gpu={"custom": {"resource": "amd.com/gpu", "quantity": 1}}))) == []


# --- PORT env var ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"ports": [{"number": 8080}], "env": [{"name": "PORT", "value": "8080"}]}, []),
        ({"port": 3000, "env": [{"name": "PORT", "value": "3000"}]}, []),
        ({"ports": [{"number": 8080}, {"number": 9000}], "env": [{"name": "PORT", "value": "9000"}]}, []),
        ({"env": [{"name": "PORT", "value": "1234"}]}, []),
        ({"env": [{"name": "PORT", "value": "anything"}]}, []),
        ({"ports": [{"number": 8080}], "env": [{"name": "port", "value": "1"}]}, []),
        (
            {"ports": [{"number": 8080}, {"number": 9000}], "env": [{"name": "A"}, {"name": "PORT", "value": "80"}]},
            [(f"{C0}.env[1].value", "PORT must be the container's exposed port (8080 or 9000)")],
        ),
        (
            {"ports": [{"number": 8080}], "env": [{"name": "PORT"}]},
            [(f"{C0}.env[0].value", "PORT must be the container's exposed port (8080)")],
        ),
        (
            {"ports": [{"number": 8080}], "env": [{"name": "PORT", "value": "08080"}]},
            [(f"{C0}.env[0].value", "PORT must be the container's exposed port (8080)")],
        ),
    ],
)
def test_port_env_var_matches_the_exposed_port(fields: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert pairs(write(workload(container(**fields)))[1]) == expected


def test_port_env_var_is_checked_against_its_own_container() -> None:
    spec = workload(
        container("app", ports=[{"number": 8080}]),
        container("side", ports=[{"number": 9000}], env=[{"name": "PORT", "value": "8080"}]),
    )
    assert errors_for(spec) == [f"{C1}.env[0].value"]


# --- mount paths ----------------------------------------------------------------------------


def vols(*paths: str) -> list[dict[str, Any]]:
    return [{"uri": f"scratch://v{i}", "path": path} for i, path in enumerate(paths)]


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (("/data", "/cache"), []),
        (("/data", "/data2", "/dat"), []),
        (("/a/b", "/a/c"), []),
        (("/data", "/data"), [("volumes[1].path", "is the same path as {c}.volumes[0].path (/data)")]),
        (("/data/", "/data"), [("volumes[1].path", "is the same path as {c}.volumes[0].path (/data)")]),
        (("/data", "/data/sub"), [("volumes[1].path", "overlaps {c}.volumes[0].path (/data)")]),
        (("/data/sub/", "/data"), [("volumes[1].path", "overlaps {c}.volumes[0].path (/data/sub)")]),
        (("/", "/data"), [("volumes[1].path", "overlaps {c}.volumes[0].path (/)")]),
        (
            ("/a", "/b", "/a/x", "/b"),
            [
                ("volumes[2].path", "overlaps {c}.volumes[0].path (/a)"),
                ("volumes[3].path", "is the same path as {c}.volumes[1].path (/b)"),
            ],
        ),
    ],
)
def test_mounts_do_not_share_or_nest_paths(paths: tuple[str, ...], expected: list[tuple[str, str]]) -> None:
    _, errors = write(workload(container(volumes=vols(*paths))))
    suffix = "; mounts may not share or nest paths"
    assert pairs(errors) == [(f"{C0}.{path}", message.format(c=C0) + suffix) for path, message in expected]


def test_different_containers_may_mount_the_same_path() -> None:
    spec = workload(container("app", volumes=vols("/data")), container("side", volumes=vols("/data")))
    assert errors_for(spec) == []


# --- every problem at once ------------------------------------------------------------------


def test_schema_problems_all_come_back_together() -> None:
    bad = {
        "name": "Bad_Name",
        "image": "nginx latest",
        "workingDir": "relative",
        "ports": [{"number": 79}, {"number": 8012, "protocol": "udp"}],
        "cpu": "lots",
        "env": [{"name": "CPLN_X"}, {"name": "OK", "value": "v" * 4097}],
        "readinessProbe": {"periodSeconds": 0},
        "volumes": [{"uri": "ftp://x", "path": "/tmp"}],
        "gpu": {"nvidia": {"model": "v100", "quantity": 1}},
    }
    _, errors = write(workload(container("ok"), bad))
    assert [e.path for e in errors] == [
        f"{C1}.name",
        f"{C1}.image",
        f"{C1}.workingDir",
        f"{C1}.ports[0].number",
        f"{C1}.ports[1].protocol",
        f"{C1}.ports[1].number",
        f"{C1}.readinessProbe.periodSeconds",
        f"{C1}.cpu",
        f"{C1}.env[0].name",
        f"{C1}.env[1].value",
        f"{C1}.gpu.nvidia.model",
        f"{C1}.volumes[0].uri",
        f"{C1}.volumes[0].path",
    ]


def test_rule_problems_all_come_back_together() -> None:
    spec = workload(
        container("app", ports=[{"number": 8080}], cpu="10m", memory="1Gi", minMemory="2Gi"),
        {"name": "app", "ports": [{"number": 8080}], "env": [{"name": "PORT", "value": "1"}]},
        container(
            "gpu",
            gpu={"nvidia": {"model": "a10g", "quantity": 2}},
            volumes=vols("/models", "/models/cache"),
        ),
        type="serverless",
    )
    _, errors = write(spec)
    assert [e.path for e in errors] == [
        f"{C1}.image",
        f"{C1}.name",
        f"{C1}.ports[0].number",
        f"{C1}.ports[0]",
        f"{C0}.cpu",
        f"{C0}.memory",
        f"{C0}.minMemory",
        f"{C1}.env[0].value",
        "spec.containers[2].gpu.nvidia.quantity",
        "spec.containers[2].cpu",
        "spec.containers[2].memory",
        "spec.containers[2].volumes[1].path",
    ]


def test_rules_on_a_spec_without_defaults_neither_raise_nor_invent_problems() -> None:
    """The rules run after the defaults, but a hook that never raises must not depend on it."""
    item = {"tags": {}, "spec": {"containers": [{"name": "app", "image": "nginx"}, {"image": "nginx"}]}}
    assert container_errors(item, CTX) == []
    item["spec"]["containers"][0]["memory"] = "1Gi"
    assert pairs(container_errors(item, CTX)) == [
        (
            f"{C0}.memory",
            "memory in Mi may be at most 8 times cpu in millicores: 1Gi needs cpu of at least 128m, "
            "or tag the workload cpln/relaxMemoryToCpuRatio to allow 32",
        )
    ]
