"""Workload containers: schema, single-field rules and the API's defaults, through build_candidate."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _workload_container_support import (
    assert_written_twice_the_same,
    container,
    errors_for,
    pairs,
    stored_container,
    workload,
    write,
)

from plinth.kinds.workload.container_models import ContainerSpec

#: Every container field, each at a legal value, in the model's field order; already filled.
MAXIMAL: dict[str, Any] = {
    "name": "api",
    "image": "//image/api:v1.2",
    "workingDir": "/srv/app",
    "metrics": {"port": 9100, "path": "/metrics", "dropMetrics": ["^go_.*", "^process_"]},
    "ports": [{"protocol": "http2", "number": 8080}, {"protocol": "grpc", "number": 50051}],
    "memory": "7Gi",
    "readinessProbe": {
        "httpGet": {
            "path": "/ready",
            "port": 8080,
            "httpHeaders": [{"name": "X-Probe", "value": "1"}],
            "scheme": "HTTPS",
        },
        "initialDelaySeconds": 0,
        "periodSeconds": 600,
        "timeoutSeconds": 600,
        "successThreshold": 20,
        "failureThreshold": 20,
    },
    "livenessProbe": {
        "grpc": {"port": 50051},
        "initialDelaySeconds": 600,
        "periodSeconds": 1,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 1,
    },
    "cpu": "2",
    "minCpu": "1",
    "minMemory": "4Gi",
    "env": [
        {"name": "PORT", "value": "8080"},
        {"name": "DB_URL", "value": "cpln://secret/db.url"},
        {"name": "POD", "value": "cpln://reference/metadata.name"},
        {"name": "-dotted.name_1", "value": "$(DB_URL)/x"},
        {"name": "EMPTY"},
    ],
    "gpu": {"nvidia": {"model": "t4", "quantity": 4}},
    "inheritEnv": True,
    "command": "/bin/server",
    "args": ["--listen", ":8080", ""],
    "lifecycle": {
        "postStart": {"exec": {"command": ["sh", "-c", "echo up"]}},
        "preStop": {"exec": {"command": ["sleep", "5"]}},
    },
    "volumes": [
        {"uri": "cpln://volumeset/data", "recoveryPolicy": "recycle", "path": "/data"},
        {"uri": "cpln://secret/tls", "recoveryPolicy": "retain", "path": "/etc/tls"},
        {"uri": "cpln://secret/db.password", "recoveryPolicy": "retain", "path": "/etc/db/password"},
        {"uri": "s3://bucket", "recoveryPolicy": "retain", "path": "/mnt/s3"},
        {"uri": "gs://bucket", "recoveryPolicy": "retain", "path": "/mnt/gs"},
        {"uri": "azureblob://account/container", "recoveryPolicy": "retain", "path": "/mnt/blob"},
        {"uri": "azurefs://account/share", "recoveryPolicy": "retain", "path": "/mnt/files"},
        {"uri": "scratch://cache", "recoveryPolicy": "retain", "path": "/var/cache/app"},
        {"uri": "k8s://secret/creds", "recoveryPolicy": "retain", "path": "/etc/creds/"},
    ],
}


# --- a maximal container ----------------------------------------------------------------------


@pytest.mark.parametrize("workload_type", ["standard", "stateful"])
def test_maximal_container_is_stored_exactly_as_sent(workload_type: str) -> None:
    item, errors = write(workload(copy.deepcopy(MAXIMAL), type=workload_type))
    assert errors == []
    assert item["spec"]["containers"] == [MAXIMAL]
    # Every field but the deprecated ``port``, which the defaults fold into ``ports``.
    assert list(item["spec"]["containers"][0]) == [name for name in ContainerSpec.model_fields if name != "port"]


def test_maximal_container_sent_in_any_key_order_is_stored_in_model_order() -> None:
    reversed_container = dict(reversed(list(copy.deepcopy(MAXIMAL).items())))
    stored = stored_container(workload(reversed_container))
    assert list(stored) == list(MAXIMAL)
    assert list(stored["readinessProbe"]) == list(MAXIMAL["readinessProbe"])


def test_eight_containers_pass_and_a_ninth_is_refused() -> None:
    eight = [container(f"c{i}") for i in range(8)]
    assert errors_for(workload(*eight)) == []
    assert errors_for(workload(*eight, container("c8"))) == ["spec.containers"]


def test_unknown_container_field_is_an_error() -> None:
    assert pairs(write(workload(container(imagePullPolicy="Always")))[1]) == [
        ("spec.containers[0].imagePullPolicy", "unknown field")
    ]


# --- the defaults ---------------------------------------------------------------------------


def test_minimal_container_gets_cpu_memory_and_inherit_env() -> None:
    stored = stored_container(workload(container()))
    assert stored == {"name": "app", "image": "nginx:1.27", "memory": "128Mi", "cpu": "50m", "inheritEnv": False}
    assert list(stored) == ["name", "image", "memory", "cpu", "inheritEnv"]


def test_sent_values_beat_the_defaults() -> None:
    stored = stored_container(workload(container(cpu="250m", memory="1Gi", inheritEnv=True)))
    assert (stored["cpu"], stored["memory"], stored["inheritEnv"]) == ("250m", "1Gi", True)


def test_each_port_gets_protocol_http() -> None:
    stored = stored_container(workload(container(ports=[{"number": 8080}, {"number": 9000, "protocol": "tcp"}])))
    assert stored["ports"] == [{"protocol": "http", "number": 8080}, {"protocol": "tcp", "number": 9000}]


def test_each_mount_gets_recovery_policy_retain() -> None:
    stored = stored_container(workload(container(volumes=[{"path": "/data", "uri": "cpln://volumeset/dd"}])))
    assert stored["volumes"] == [{"uri": "cpln://volumeset/dd", "recoveryPolicy": "retain", "path": "/data"}]


@pytest.mark.parametrize(
    ("sent", "ports"),
    [
        ({"port": 8080}, [{"protocol": "http", "number": 8080}]),
        (
            {"port": 8080, "ports": [{"number": 9000, "protocol": "grpc"}]},
            [{"protocol": "grpc", "number": 9000}, {"protocol": "http", "number": 8080}],
        ),
        ({"port": 8080, "ports": [{"number": 8080, "protocol": "http2"}]}, [{"protocol": "http2", "number": 8080}]),
        ({"port": 8080, "ports": []}, [{"protocol": "http", "number": 8080}]),
    ],
)
def test_legacy_port_moves_into_ports(sent: dict[str, Any], ports: list[dict[str, Any]]) -> None:
    stored = stored_container(workload(container(**sent)))
    assert "port" not in stored
    assert stored["ports"] == ports


@pytest.mark.parametrize(("kind", "delay"), [("readinessProbe", 10), ("livenessProbe", 60)])
def test_probe_defaults_fill_a_sent_probe(kind: str, delay: int) -> None:
    ports = [{"number": 8080}, {"number": 9000}]
    stored = stored_container(workload(container(ports=ports, **{kind: {"httpGet": {}}})))
    assert stored[kind] == {
        "httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert list(stored[kind]) == [
        "httpGet",
        "initialDelaySeconds",
        "periodSeconds",
        "timeoutSeconds",
        "successThreshold",
        "failureThreshold",
    ]
    assert list(stored[kind]["httpGet"]) == ["path", "port", "scheme"]


def test_http_get_port_defaults_to_the_legacy_port_once_converted() -> None:
    stored = stored_container(workload(container(port=3000, readinessProbe={"httpGet": {"path": "/h"}})))
    assert stored["readinessProbe"]["httpGet"] == {"path": "/h", "port": 3000, "scheme": "HTTP"}


def test_http_get_port_stays_absent_without_container_ports() -> None:
    stored = stored_container(workload(container(livenessProbe={"httpGet": {}})))
    assert stored["livenessProbe"]["httpGet"] == {"path": "/", "scheme": "HTTP"}


@pytest.mark.parametrize("handler", [{"tcpSocket": {}}, {"grpc": {}}, {"exec": {"command": ["true"]}}])
def test_only_http_get_takes_the_first_port(handler: dict[str, Any]) -> None:
    stored = stored_container(workload(container(ports=[{"number": 8080}], readinessProbe=handler)))
    assert stored["readinessProbe"] == {
        **handler,
        "initialDelaySeconds": 10,
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def test_sent_probe_values_are_kept() -> None:
    probe = {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 0, "periodSeconds": 30, "failureThreshold": 1}
    stored = stored_container(workload(container(ports=[{"number": 8080}], livenessProbe=probe)))
    assert stored["livenessProbe"] == {
        "tcpSocket": {"port": 8080},
        "initialDelaySeconds": 0,
        "periodSeconds": 30,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 1,
    }


def test_no_probe_is_added_when_none_is_sent() -> None:
    stored = stored_container(workload(container(ports=[{"number": 8080}]), type="serverless"))
    assert "readinessProbe" not in stored
    assert "livenessProbe" not in stored


def test_cron_probes_are_stripped() -> None:
    probes = {"readinessProbe": {"tcpSocket": {"port": 8080}}, "livenessProbe": {"exec": {"command": ["true"]}}}
    spec = workload(container(**probes), type="cron", job={"schedule": "0 * * * *"})
    stored = stored_container(spec)
    assert "readinessProbe" not in stored
    assert "livenessProbe" not in stored
    assert stored_container(workload(container(**probes)))["readinessProbe"]["tcpSocket"] == {"port": 8080}


@pytest.mark.parametrize(
    "spec",
    [
        workload(),
        workload(copy.deepcopy(MAXIMAL)),
        workload(container(port=8080, readinessProbe={"httpGet": {}}, livenessProbe={"tcpSocket": {}})),
        workload(container(port=8080, ports=[{"number": 9000}]), container("side", ports=[{"number": 9001}])),
        workload(container(volumes=[{"uri": "scratch://x", "path": "/x/"}], env=[{"name": "A"}])),
        workload(container(ports=[{"number": 80}]), type="serverless"),
        workload(container(readinessProbe={"grpc": {}}), type="cron", job={"schedule": "0 * * * *"}),
    ],
)
def test_defaults_are_idempotent(spec: dict[str, Any]) -> None:
    assert_written_twice_the_same(spec)
