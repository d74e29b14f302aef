"""How the driver reads ``ps`` and ``events`` JSON: pure tests of podman's and docker's shapes
(docker has no daemon on this machine, so its shapes are the documented ones, written out)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from plinth.runtime.containers.events import event_argv, parse_event
from plinth.runtime.containers.listing import docker_labels, parse_ps

PODMAN_PS = [
    {
        "Id": "a" * 64,
        "Names": ["web_1"],
        "Image": "localhost/img:1",
        "State": "running",
        "ExitCode": 0,
        "StartedAt": 1795766273,
        "ExitedAt": -62135596800,
        "Labels": {"plinth.managed": "true", "plinth.workload": "web"},
        "Ports": [
            {"host_ip": "127.0.0.1", "container_port": 8080, "host_port": 41091, "range": 2, "protocol": "tcp"},
            {"host_ip": "0.0.0.0", "container_port": 9000, "host_port": 40000, "range": 1, "protocol": "tcp"},
            {"host_ip": "127.0.0.1", "container_port": 53, "host_port": 40001, "range": 1, "protocol": "udp"},
        ],
    },
    {"Id": "b" * 64, "Names": ["job_1"], "State": "stopped", "ExitCode": 7, "ExitedAt": 1795766300, "Ports": None},
]

DOCKER_PS = [
    {
        "ID": "c" * 64,
        "Names": "web_1",
        "Image": "img:1",
        "Labels": "plinth.managed=true,plinth.secrets=web_1-secret-0,web_1-secret-1,plinth.workload=web",
        "State": "exited",
        "Status": "Exited (3) 5 seconds ago",
        "Ports": "127.0.0.1:32768->8080/tcp, 0.0.0.0:32769->9000/tcp, 8443/tcp",
    },
    {"ID": "d" * 64, "Names": "old", "Labels": "", "Status": "Up 2 minutes", "Ports": ""},
]


def test_podmans_ps_array_gives_state_exit_code_times_loopback_ports_and_labels() -> None:
    web, job = parse_ps(json.dumps(PODMAN_PS).encode(), "podman")
    assert (web.id, web.name, web.image, web.state, web.exit_code) == (
        "a" * 64,
        "web_1",
        "localhost/img:1",
        "running",
        0,
    )
    assert web.ports == {8080: 41091, 8081: 41092}  # a range of two; not 0.0.0.0, not udp
    assert web.labels == {"plinth.managed": "true", "plinth.workload": "web"}
    assert web.started_at == datetime.fromtimestamp(1795766273, UTC) and web.finished_at is None
    assert (job.state, job.exit_code, job.ports, job.labels, job.started_at) == ("exited", 7, {}, {}, None)
    assert job.finished_at == datetime.fromtimestamp(1795766300, UTC)
    assert parse_ps(b"[]\n", "podman") == [] and parse_ps(b"", "podman") == []


def test_dockers_ps_lines_give_the_same_from_its_flatter_shape() -> None:
    out = "\n".join(json.dumps(doc) for doc in DOCKER_PS).encode()
    web, old = parse_ps(out, "docker")
    assert (web.name, web.state, web.exit_code, web.ports) == ("web_1", "exited", 3, {8080: 32768})
    assert web.labels["plinth.secrets"] == "web_1-secret-0,web_1-secret-1"  # a value holding a comma
    assert web.labels["plinth.workload"] == "web" and web.started_at is None
    assert (old.state, old.labels, old.exit_code) == ("running", {}, 0)  # no State field: from Status
    assert docker_labels("a=1,b=x=y") == {"a": "1", "b": "x=y"}


def test_events_of_either_engine_read_as_an_action_a_name_and_labels() -> None:
    podman = {
        "ID": "e" * 64,
        "Name": "web_1",
        "Status": "died",
        "Type": "container",
        "Attributes": {"plinth.managed": "true", "plinth.org": "o"},
    }
    event = parse_event(json.dumps(podman))
    assert event is not None and (event.action, event.name, event.id) == ("died", "web_1", "e" * 64)
    assert event.labels == {"plinth.managed": "true", "plinth.org": "o"}
    docker = {
        "status": "exec_start: sh -c true",
        "id": "f" * 64,
        "Type": "container",
        "Action": "exec_start: sh -c true",
        "Actor": {"ID": "f" * 64, "Attributes": {"name": "web_1", "plinth.org": "o"}},
    }
    event = parse_event(json.dumps(docker))
    assert event is not None and (event.action, event.name, event.labels["plinth.org"]) == ("exec_start", "web_1", "o")
    assert parse_event(json.dumps({"Type": "image", "Status": "pull"})) is None
    assert parse_event("not json") is None
    assert event_argv("podman")[:3] == ["events", "--format", "json"]
    assert "label=plinth.managed=true" in event_argv("docker")
