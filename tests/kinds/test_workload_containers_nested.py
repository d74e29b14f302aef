"""Workload containers: the nested blocks' schema (probes, volumes, GPU) at their boundaries."""

from __future__ import annotations

from typing import Any

import pytest
from _workload_container_support import container, errors_for, pairs, workload, write

C0 = "spec.containers[0]"
TCP = {"tcpSocket": {"port": 8080}}


def one(**fields: Any) -> dict[str, Any]:
    return workload(container(ports=[{"number": 8080}], **fields))


# --- probes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("initialDelaySeconds", -1, False),
        ("initialDelaySeconds", 0, True),
        ("initialDelaySeconds", 600, True),
        ("initialDelaySeconds", 601, False),
        ("periodSeconds", 0, False),
        ("periodSeconds", 1, True),
        ("periodSeconds", 600, True),
        ("periodSeconds", 601, False),
        ("timeoutSeconds", 0, False),
        ("timeoutSeconds", 1, True),
        ("timeoutSeconds", 600, True),
        ("timeoutSeconds", 601, False),
        ("successThreshold", 0, False),
        ("successThreshold", 1, True),
        ("successThreshold", 20, True),
        ("successThreshold", 21, False),
        ("failureThreshold", 0, False),
        ("failureThreshold", 1, True),
        ("failureThreshold", 20, True),
        ("failureThreshold", 21, False),
        ("periodSeconds", 1.5, False),
        ("periodSeconds", "10", False),
    ],
)
@pytest.mark.parametrize("kind", ["readinessProbe", "livenessProbe"])
def test_probe_bounds(kind: str, field: str, value: Any, ok: bool) -> None:
    assert errors_for(one(**{kind: {**TCP, field: value}})) == ([] if ok else [f"{C0}.{kind}.{field}"])


@pytest.mark.parametrize(
    "probe",
    [
        {},
        {"periodSeconds": 5},
        {"tcpSocket": {}, "grpc": {}},
        {"exec": {"command": ["true"]}, "httpGet": {}},
        {"exec": {"command": ["true"]}, "grpc": {}, "tcpSocket": {}, "httpGet": {}},
    ],
)
def test_a_probe_names_exactly_one_handler(probe: dict[str, Any]) -> None:
    _, errors = write(one(readinessProbe=probe))
    assert [e.path for e in errors] == [f"{C0}.readinessProbe"]
    assert errors[0].message.startswith("must set exactly one probe handler: exec, grpc, tcpSocket, httpGet")


@pytest.mark.parametrize(
    ("http_get", "expected"),
    [
        ({"path": "/" + "p" * 255}, []),
        ({"path": "/" + "p" * 256}, ["path"]),
        ({"scheme": "HTTPS"}, []),
        ({"scheme": "https"}, ["scheme"]),
        ({"scheme": "TCP"}, ["scheme"]),
        ({"port": 79}, ["port"]),
        ({"port": 65535}, []),
        ({"httpHeaders": [{"name": "X-A", "value": ""}]}, []),
        ({"httpHeaders": [{"name": "X-A"}]}, ["httpHeaders[0].value"]),
        ({"httpHeaders": [{"name": "", "value": "v"}]}, ["httpHeaders[0].name"]),
        ({"httpHeaders": {"X-A": "v"}}, ["httpHeaders"]),
        ({"host": "example.com"}, ["host"]),
    ],
)
def test_http_get_fields(http_get: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(one(livenessProbe={"httpGet": http_get})) == [f"{C0}.livenessProbe.httpGet.{p}" for p in expected]


def test_exec_probe_needs_a_command() -> None:
    assert pairs(write(one(readinessProbe={"exec": {}}))[1]) == [(f"{C0}.readinessProbe.exec.command", "is required")]
    assert errors_for(one(readinessProbe={"exec": {"command": []}})) == [f"{C0}.readinessProbe.exec.command"]


# --- volumes --------------------------------------------------------------------------------


def mounts(count: int) -> list[dict[str, Any]]:
    return [{"uri": f"scratch://v{i}", "path": f"/mnt/v{i}"} for i in range(count)]


def test_fifteen_mounts_pass_and_sixteen_are_refused() -> None:
    assert errors_for(one(volumes=mounts(15))) == []
    assert errors_for(one(volumes=mounts(16))) == [f"{C0}.volumes"]


@pytest.mark.parametrize(
    "uri",
    [
        "s3://bucket",
        "s3://bucket/prefix",
        "gs://bucket",
        "azureblob://account/container",
        "azurefs://account/share",
        "scratch://tmp",
        "k8s://secret/x",
        "cpln://secret/db",
        "cpln://secret/db.password",
        "cpln://secret/db.a.b",
        "cpln://volumeset/data",
    ],
)
def test_good_volume_uris(uri: str) -> None:
    assert errors_for(one(volumes=[{"uri": uri, "path": "/data"}])) == []


@pytest.mark.parametrize(
    ("uri", "hint"),
    [
        ("http://bucket", "must be s3://"),
        ("S3://bucket", "must be s3://"),
        ("s3://", "must be s3://"),
        ("s3:/bucket", "must be s3://"),
        ("bucket", "must be s3://"),
        ("s3://a b", "must be s3://"),
        ("cpln://identity/x1", "a cpln:// volume"),
        ("cpln://secret/", "a cpln:// volume"),
        ("cpln://secret/Db", "a cpln:// volume"),
        ("cpln://secret/db.", "a cpln:// volume"),
        ("cpln://volumeset/data.key", "a cpln:// volume"),
        ("cpln://volumeset/data/sub", "a cpln:// volume"),
        ("cpln://reference/metadata.name", "a cpln:// volume"),
    ],
)
def test_bad_volume_uris(uri: str, hint: str) -> None:
    _, errors = write(one(volumes=[{"uri": uri, "path": "/data"}]))
    assert [e.path for e in errors] == [f"{C0}.volumes[0].uri"]
    assert errors[0].message.startswith(hint)


@pytest.mark.parametrize(
    ("path", "hint"),
    [
        ("data", "must be an absolute path"),
        ("", "must be an absolute path"),
        ("/dev", "cannot mount over /dev"),
        ("/dev/", "cannot mount over /dev"),
        ("/dev/log", "cannot mount over /dev/log"),
        ("/dev/log/", "cannot mount over /dev/log"),
        ("/tmp", "cannot mount over /tmp"),
        ("/tmp/", "cannot mount over /tmp"),
        ("/var", "cannot mount over /var"),
        ("/var/", "cannot mount over /var"),
        ("/var/log", "cannot mount over /var/log"),
        ("/var/log//", "cannot mount over /var/log"),
    ],
)
def test_bad_mount_paths(path: str, hint: str) -> None:
    _, errors = write(one(volumes=[{"uri": "scratch://x", "path": path}]))
    assert [e.path for e in errors] == [f"{C0}.volumes[0].path"]
    assert errors[0].message.startswith(hint)


@pytest.mark.parametrize("path", ["/tmp/app", "/var/lib/data", "/dev/shm", "/devices", "/tmpdata", "/var/logs"])
def test_paths_under_or_beside_reserved_ones_are_fine(path: str) -> None:
    assert errors_for(one(volumes=[{"uri": "scratch://x", "path": path}])) == []


@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        ({"uri": "scratch://x"}, ["path"]),
        ({"path": "/x"}, ["uri"]),
        ({"uri": "scratch://x", "path": "/x", "recoveryPolicy": "delete"}, ["recoveryPolicy"]),
        ({"uri": "scratch://x", "path": "/x", "recoveryPolicy": "recycle"}, []),
        ({"uri": "scratch://x", "path": "/x", "bus": "virtio"}, ["bus"]),
    ],
)
def test_volume_fields(volume: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(one(volumes=[volume])) == [f"{C0}.volumes[0].{p}" for p in expected]


# --- gpu ------------------------------------------------------------------------------------

BIG = {"cpu": "2", "memory": "8Gi"}


@pytest.mark.parametrize(
    ("gpu", "expected"),
    [
        ({"nvidia": {"model": "t4", "quantity": 1}}, []),
        ({"nvidia": {"model": "a10g", "quantity": 1}}, []),
        ({"nvidia": {"model": "a100", "quantity": 1}}, ["nvidia.model"]),
        ({"nvidia": {"model": "t4", "quantity": 0}}, ["nvidia.quantity"]),
        ({"nvidia": {"model": "t4", "quantity": 5}}, ["nvidia.quantity"]),
        ({"nvidia": {"model": "t4"}}, ["nvidia.quantity"]),
        ({"custom": {"resource": "amd.com/gpu", "quantity": 0}}, []),
        ({"custom": {"resource": "amd.com/gpu", "runtimeClass": "rocm", "quantity": 8}}, []),
        ({"custom": {"resource": "amd.com/gpu", "quantity": 9}}, ["custom.quantity"]),
        ({"custom": {"resource": "amd.com/gpu", "quantity": -1}}, ["custom.quantity"]),
        ({"custom": {"resource": "a" * 65, "quantity": 1}}, ["custom.resource"]),
        ({"custom": {"resource": "amd_gpu", "quantity": 1}}, ["custom.resource"]),
        ({"custom": {"resource": "", "quantity": 1}}, ["custom.resource"]),
        ({"custom": {"resource": "x", "runtimeClass": "a b", "quantity": 1}}, ["custom.runtimeClass"]),
        ({"custom": {"resource": "x", "runtimeClass": "r" * 65, "quantity": 1}}, ["custom.runtimeClass"]),
        ({"custom": {"quantity": 1}}, ["custom.resource"]),
    ],
)
def test_gpu_fields(gpu: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(one(gpu=gpu, **BIG)) == [f"{C0}.gpu.{p}" for p in expected]


@pytest.mark.parametrize(
    "gpu",
    [{}, {"nvidia": {"model": "t4", "quantity": 1}, "custom": {"resource": "x", "quantity": 1}}],
)
def test_gpu_names_exactly_one_kind(gpu: dict[str, Any]) -> None:
    _, errors = write(one(gpu=gpu, **BIG))
    assert [e.path for e in errors] == [f"{C0}.gpu"]
    assert errors[0].message.startswith("must set exactly one GPU kind: nvidia, custom")
