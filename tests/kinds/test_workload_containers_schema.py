"""Workload containers: each single-field rule of the schema, at its boundaries and JSON path."""

from __future__ import annotations

from typing import Any

import pytest
from _workload_container_support import container, errors_for, pairs, workload, write

from plinth.kinds.workload.ports import RESERVED_PORTS

C0 = "spec.containers[0]"


def one(**fields: Any) -> dict[str, Any]:
    """A standard workload with one container carrying ``fields``."""
    return workload(container(**fields))


# --- name and image -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("App", "must match"),
        ("a", "must match"),
        ("1app", "must match"),
        ("app-", "must match"),
        ("app_1", "must match"),
        ("a" * 65, "at most 64"),
        ("cpln-sidecar", "must not start with 'cpln-'"),
        ("debugger-x", "must not start with 'debugger-'"),
        ("istio-proxy", "the platform adds"),
        ("queue-proxy", "the platform adds"),
        ("istio-validation", "the platform adds"),
        ("cpln-envoy-assassin", "the platform adds"),
        ("cpln-writer-proxy", "the platform adds"),
        ("cpln-reader-proxy", "the platform adds"),
        ("cpln-dbaas-config", "the platform adds"),
    ],
)
def test_bad_container_names(name: str, hint: str) -> None:
    _, errors = write(workload(container(name)))
    assert [e.path for e in errors] == [f"{C0}.name"]
    assert hint in errors[0].message


@pytest.mark.parametrize("name", ["ab", "a" * 64, "web-1", "cpln", "debugger", "istio-proxy-2", "my-cpln-app"])
def test_good_container_names(name: str) -> None:
    assert errors_for(workload(container(name))) == []


def test_name_is_required() -> None:
    assert pairs(write(workload({"image": "nginx"}))[1]) == [(f"{C0}.name", "is required")]


@pytest.mark.parametrize(
    "image",
    [
        "nginx",
        "nginx:latest",
        "library/nginx:1.27@sha256:abc",
        "ghcr.io/org/app:v1",
        "registry.example.com:5000/team/app:1",
        "acme.registry.cpln.io/api:v2",
        "other.registry.cpln.io/api:v2",
        "//image/api:v1",
        "//image/api",
        "/org/acme/image/api:v1",
    ],
)
def test_every_image_form_is_accepted(image: str) -> None:
    assert errors_for(one(image=image)) == []


@pytest.mark.parametrize("image", ["", " nginx", "nginx latest", "nginx\n", "/image/api:v1", "//image/", "//gvc/x"])
def test_bad_images(image: str) -> None:
    assert errors_for(one(image=image)) == [f"{C0}.image"]


@pytest.mark.parametrize(("field", "value"), [("image", 5), ("name", None), ("inheritEnv", "true"), ("args", "a b")])
def test_types_are_strict(field: str, value: Any) -> None:
    assert errors_for(one(**{field: value})) == [f"{C0}.{field}"]


# --- ports ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "ok"),
    [(79, False), (80, True), (443, True), (8011, True), (8013, True), (65535, True), (65536, False), (0, False)],
)
def test_port_number_bounds(number: int, ok: bool) -> None:
    assert errors_for(one(ports=[{"number": number}])) == ([] if ok else [f"{C0}.ports[0].number"])
    assert errors_for(one(port=number)) == ([] if ok else [f"{C0}.port"])


@pytest.mark.parametrize("number", sorted(RESERVED_PORTS))
def test_reserved_ports_are_refused_everywhere(number: int) -> None:
    _, errors = write(one(ports=[{"number": number}]))
    assert pairs(errors)[0][0] == f"{C0}.ports[0].number"
    assert pairs(errors)[0][1].startswith(f"{number} is reserved by the platform")
    assert errors_for(one(port=number)) == [f"{C0}.port"]
    assert errors_for(one(metrics={"port": number, "path": "/m"})) == [f"{C0}.metrics.port"]
    for handler in ("grpc", "tcpSocket", "httpGet"):
        assert errors_for(one(readinessProbe={handler: {"port": number}})) == [f"{C0}.readinessProbe.{handler}.port"]


@pytest.mark.parametrize(
    ("port", "path"),
    [
        ({"number": 8080, "protocol": "https"}, "protocol"),
        ({"number": 8080, "protocol": "HTTP"}, "protocol"),
        ({"number": "8080"}, "number"),
        ({"number": 8080.0}, "number"),
        ({"protocol": "http"}, "number"),
        ({"number": 8080, "name": "web"}, "name"),
    ],
)
def test_bad_port_entries(port: dict[str, Any], path: str) -> None:
    assert errors_for(one(ports=[port])) == [f"{C0}.ports[0].{path}"]


@pytest.mark.parametrize("protocol", ["http", "http2", "grpc", "tcp"])
def test_every_protocol_is_accepted(protocol: str) -> None:
    assert errors_for(one(ports=[{"number": 8080, "protocol": protocol}])) == []


# --- resources ------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["cpu", "memory", "minCpu", "minMemory"])
@pytest.mark.parametrize("value", ["1 Gi", "-1", "1GB", "lots", "", "1" * 21])
def test_bad_quantities(field: str, value: str) -> None:
    assert errors_for(one(**{field: value})) == [f"{C0}.{field}"]


@pytest.mark.parametrize(("cpu", "memory"), [("1", "1Gi"), ("1000m", "1024Mi"), ("0.5", "512M"), ("1e0", "1G")])
def test_quantity_forms(cpu: str, memory: str) -> None:
    assert errors_for(one(cpu=cpu, memory=memory)) == []


# --- env ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("1ABC", "must match"),
        ("A B", "must match"),
        ("A=B", "must match"),
        ("", "must match"),
        ("A" * 121, "at most 120"),
        ("CPLN_TOKEN", "'CPLN_' prefix is reserved"),
        ("CPLN_", "'CPLN_' prefix is reserved"),
        ("K_SERVICE", "reserved by the platform"),
        ("k_revision", "reserved by the platform"),
        ("K_Configuration", "reserved by the platform"),
    ],
)
def test_bad_env_names(name: str, hint: str) -> None:
    _, errors = write(one(env=[{"name": "OK", "value": "1"}, {"name": name, "value": "x"}]))
    assert [e.path for e in errors] == [f"{C0}.env[1].name"]
    assert hint in errors[0].message


@pytest.mark.parametrize("name", ["A" * 120, "_x", ".x", "-x", "cpln_lower", "XCPLN_RUN_BY", "K_SERVICES", "a.b-c_9"])
def test_good_env_names(name: str) -> None:
    assert errors_for(one(env=[{"name": name, "value": "v"}])) == []


@pytest.mark.parametrize(("length", "ok"), [(0, True), (4096, True), (4097, False)])
def test_env_value_length(length: int, ok: bool) -> None:
    assert errors_for(one(env=[{"name": "A", "value": "v" * length}])) == ([] if ok else [f"{C0}.env[0].value"])


def test_env_entry_needs_a_name_and_no_other_field() -> None:
    _, errors = write(one(env=[{"value": "x"}, {"name": "A", "valueFrom": "x"}]))
    assert pairs(errors) == [(f"{C0}.env[0].name", "is required"), (f"{C0}.env[1].valueFrom", "unknown field")]


# --- command, workingDir, metrics, lifecycle ------------------------------------------------


@pytest.mark.parametrize(("length", "ok"), [(256, True), (257, False)])
def test_command_length(length: int, ok: bool) -> None:
    assert errors_for(one(command="x" * length)) == ([] if ok else [f"{C0}.command"])


@pytest.mark.parametrize(
    ("path", "ok"), [("/", True), ("/srv/app", True), ("srv", False), ("./app", False), ("", False)]
)
def test_working_dir_is_absolute(path: str, ok: bool) -> None:
    assert errors_for(one(workingDir=path)) == ([] if ok else [f"{C0}.workingDir"])


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        ({"port": 9100, "path": "/" + "m" * 127}, []),
        ({"port": 9100, "path": "/" + "m" * 128}, [f"{C0}.metrics.path"]),
        ({"port": 9100, "path": ""}, [f"{C0}.metrics.path"]),
        ({"port": 9100}, [f"{C0}.metrics.path"]),
        ({"path": "/metrics"}, [f"{C0}.metrics.port"]),
        ({"port": 79, "path": "/metrics"}, [f"{C0}.metrics.port"]),
        ({"port": 9100, "path": "/m", "dropMetrics": "x"}, [f"{C0}.metrics.dropMetrics"]),
    ],
)
def test_metrics(metrics: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(one(metrics=metrics)) == expected


@pytest.mark.parametrize(
    ("lifecycle", "expected"),
    [
        ({}, []),
        ({"preStop": {"exec": {"command": ["sleep", "1"]}}}, []),
        ({"preStop": {"exec": {"command": []}}}, [f"{C0}.lifecycle.preStop.exec.command"]),
        ({"postStart": {}}, [f"{C0}.lifecycle.postStart.exec"]),
        ({"postStart": {"httpGet": {}}}, [f"{C0}.lifecycle.postStart.exec", f"{C0}.lifecycle.postStart.httpGet"]),
    ],
)
def test_lifecycle(lifecycle: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(one(lifecycle=lifecycle)) == expected
