"""The plan: a workload's documents to the replicas it wants (pure; no engine, no store)."""

from __future__ import annotations

from typing import Any

import pytest

from plinth.runtime.containers.protocol import GVC, LOCATION, MANAGED, ORG, WORKLOAD, SecretFile
from plinth.runtime.controller.plan import (
    CONTAINER,
    DEPLOY_TIMESTAMP,
    REPLICA,
    TYPE,
    VOLUME_SET,
    Blocked,
    memory_bytes,
    millicores,
    plan_workload,
    slot_name,
)

LOCATIONS = ["aws-us-west-2", "gcp-us-east1"]
SECRETS = {"cpln://secret/db.password": "s3cret", "cpln://secret/token": "tok"}


def resolve(ref: str) -> str:
    return SECRETS[ref]


def gvc_doc(**spec: Any) -> dict[str, Any]:
    return {
        "kind": "gvc",
        "name": "main",
        "alias": "abc123",
        "links": [{"rel": "self", "href": "/org/acme/gvc/main"}],
        "spec": spec,
    }


def workload_doc(type_: str = "standard", name: str = "web", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": type_,
        "containers": [{"name": "main", "image": "nginx:1.27", "ports": [{"number": 8080, "protocol": "http"}]}],
        "defaultOptions": {"autoscaling": {"minScale": 2, "maxScale": 4}},
    }
    body.update(spec)
    return {
        "kind": "workload",
        "name": name,
        "version": 3,
        "tags": {},
        "links": [{"rel": "self", "href": f"/org/acme/gvc/main/workload/{name}"}],
        "spec": body,
    }


def test_standard_runs_min_scale_per_location_with_identity_labels_limits_and_ports() -> None:
    specs = plan_workload(workload_doc(), gvc_doc(), LOCATIONS, resolve=resolve, labels={"plinth.scope": "s1"})
    assert [s.name for s in specs] == [
        slot_name("acme", "main", "aws-us-west-2", "web-0", "main"),
        slot_name("acme", "main", "aws-us-west-2", "web-1", "main"),
        slot_name("acme", "main", "gcp-us-east1", "web-0", "main"),
        slot_name("acme", "main", "gcp-us-east1", "web-1", "main"),
    ]
    assert specs[0].name == "plinth_acme_main_aws-us-west-2_web-0_main"
    first = specs[0]
    assert first.labels == {
        MANAGED: "true",
        ORG: "acme",
        GVC: "main",
        WORKLOAD: "web",
        LOCATION: "aws-us-west-2",
        REPLICA: "web-0",
        CONTAINER: "main",
        TYPE: "standard",
        "plinth.scope": "s1",
    }
    assert specs[2].labels[LOCATION] == "gcp-us-east1"
    assert first.image == "nginx:1.27" and first.ports == (8080,) and first.hostname == "web-0"
    # The platform's defaults when the container names no resources.
    assert first.cpu_millicores == 50 and first.memory_bytes == 128 * 2**20
    assert first.env["PORT"] == "8080"
    assert first.env["CPLN_LOCATION"] == "aws-us-west-2" and first.env["CPLN_WORKLOAD"] == "web"
    assert first.env["CPLN_ORG"] == "acme" and first.env["CPLN_GVC"] == "main"
    assert first.env["CPLN_GVC_ALIAS"] == "abc123"


def test_local_options_override_the_scale_of_their_location_only() -> None:
    doc = workload_doc(localOptions=[{"location": "//location/gcp-us-east1", "autoscaling": {"minScale": 3}}])
    specs = plan_workload(doc, gvc_doc(), LOCATIONS, resolve=resolve)
    by_location = [s.labels[LOCATION] for s in specs]
    assert by_location.count("aws-us-west-2") == 2 and by_location.count("gcp-us-east1") == 3


@pytest.mark.parametrize(
    "options",
    [
        {"suspend": True, "autoscaling": {"minScale": 2}},
        {"autoscaling": {"minScale": 0, "maxScale": 0}},
    ],
)
def test_suspended_or_max_scale_zero_runs_nothing(options: dict[str, Any]) -> None:
    assert plan_workload(workload_doc(defaultOptions=options), gvc_doc(), LOCATIONS, resolve=resolve) == []


def test_suspended_in_one_location_runs_elsewhere() -> None:
    doc = workload_doc(localOptions=[{"location": "//location/aws-us-west-2", "suspend": True}])
    specs = plan_workload(doc, gvc_doc(), LOCATIONS, resolve=resolve)
    assert {s.labels[LOCATION] for s in specs} == {"gcp-us-east1"} and len(specs) == 2


def test_min_scale_defaults_to_one_and_no_location_means_nothing() -> None:
    doc = workload_doc(defaultOptions={})
    assert len(plan_workload(doc, gvc_doc(), LOCATIONS, resolve=resolve)) == 2
    assert plan_workload(doc, gvc_doc(), [], resolve=resolve) == []


def test_serverless_runs_min_scale_like_standard() -> None:
    specs = plan_workload(workload_doc("serverless"), gvc_doc(), LOCATIONS[:1], resolve=resolve)
    assert [s.labels[REPLICA] for s in specs] == ["web-0", "web-1"]
    assert all(s.labels[TYPE] == "serverless" and s.env["PORT"] == "8080" for s in specs)


def test_stateful_replicas_have_stable_ordered_names() -> None:
    doc = workload_doc("stateful", name="db", defaultOptions={"autoscaling": {"minScale": 3, "maxScale": 3}})
    specs = plan_workload(doc, gvc_doc(), LOCATIONS[:1], resolve=resolve)
    assert [s.labels[REPLICA] for s in specs] == ["db-0", "db-1", "db-2"]
    assert [s.hostname for s in specs] == ["db-0", "db-1", "db-2"]
    assert [s.name for s in specs] == [f"plinth_acme_main_aws-us-west-2_db-{i}_main" for i in range(3)]
    assert "PORT" not in specs[0].env  # injected for standard and serverless only
    # The same documents give the same plan: names are deterministic.
    assert plan_workload(doc, gvc_doc(), LOCATIONS[:1], resolve=resolve) == specs


@pytest.mark.parametrize(
    ("type_", "names"), [("stateful", ["_vs_data_0", "_vs_data_1"]), ("standard", ["_vs_data"] * 2)]
)
def test_volume_set_volumes_are_a_stateful_replicas_own_or_shared(type_: str, names: list[str]) -> None:
    volumes = [{"uri": "cpln://volumeset/data", "path": "/data"}, {"uri": "cpln://secret/s", "path": "/s"}]
    container = {"name": "main", "image": "x", "ports": [{"number": 80}], "volumes": volumes}
    specs = plan_workload(
        workload_doc(type_, containers=[container]), gvc_doc(), LOCATIONS[:1], resolve=resolve, labels={"scope": "a"}
    )
    base = "plinth_acme_main_aws-us-west-2"
    assert [[m.volume for m in s.volumes] for s in specs] == [[base + n] for n in names]  # a secret volume: not yet
    mount = specs[0].volumes[0]
    assert mount.path == "/data"
    assert dict(mount.labels) == {
        "scope": "a",
        MANAGED: "true",
        ORG: "acme",
        GVC: "main",
        LOCATION: "aws-us-west-2",
        VOLUME_SET: "data",
    }


def test_cron_has_no_long_running_replicas() -> None:
    doc = workload_doc("cron", job={"schedule": "* * * * *"}, defaultOptions={"autoscaling": {"minScale": 1}})
    assert plan_workload(doc, gvc_doc(), LOCATIONS, resolve=resolve) == []


def test_container_fields_env_secrets_and_inherited_env() -> None:
    container = {
        "name": "app",
        "image": "localhost/app:1",
        "command": "/bin/sh",
        "args": ["-c", "echo hi"],
        "cpu": "250m",
        "memory": "1Gi",
        "port": 9000,
        "ports": [{"number": 8080}],
        "inheritEnv": True,
        "env": [
            {"name": "PLAIN", "value": "1"},
            {"name": "SHARED", "value": "mine"},
            {"name": "PASSWORD", "value": "cpln://secret/db.password"},
            {"name": "EMPTY"},
        ],
    }
    gvc = gvc_doc(env=[{"name": "SHARED", "value": "gvc"}, {"name": "FROM_GVC", "value": "g"}])
    (spec,) = plan_workload(
        workload_doc(containers=[container], defaultOptions={}), gvc, LOCATIONS[:1], resolve=resolve
    )
    assert spec.command == "/bin/sh" and spec.args == ("-c", "echo hi")
    assert spec.cpu_millicores == 250 and spec.memory_bytes == 2**30
    assert spec.ports == (8080, 9000)
    assert spec.env["PLAIN"] == "1" and spec.env["EMPTY"] == ""
    assert spec.env["SHARED"] == "mine" and spec.env["FROM_GVC"] == "g"
    assert spec.env["PASSWORD"] == "s3cret"
    assert spec.labels[CONTAINER] == "app" and spec.name.endswith("_web-0_app")


def test_gvc_env_is_not_inherited_unless_asked() -> None:
    gvc = gvc_doc(env=[{"name": "FROM_GVC", "value": "g"}])
    (spec, _) = plan_workload(workload_doc(), gvc, LOCATIONS[:1], resolve=resolve)
    assert "FROM_GVC" not in spec.env


def test_a_resolver_failure_propagates() -> None:
    container = {"name": "main", "image": "x", "env": [{"name": "T", "value": "cpln://secret/missing"}]}
    with pytest.raises(KeyError):
        plan_workload(workload_doc(containers=[container]), gvc_doc(), LOCATIONS[:1], resolve=resolve)


def test_every_container_of_a_replica_is_planned() -> None:
    containers = [
        {"name": "main", "image": "a", "ports": [{"number": 8080}]},
        {"name": "sidecar", "image": "b"},
    ]
    specs = plan_workload(workload_doc(containers=containers), gvc_doc(), LOCATIONS[:1], resolve=resolve)
    assert [(s.labels[REPLICA], s.labels[CONTAINER]) for s in specs] == [
        ("web-0", "main"),
        ("web-0", "sidecar"),
        ("web-1", "main"),
        ("web-1", "sidecar"),
    ]
    assert len({s.name for s in specs}) == 4


def test_deploy_timestamp_tag_changes_the_spec() -> None:
    doc = workload_doc()
    before = plan_workload(doc, gvc_doc(), LOCATIONS[:1], resolve=resolve)
    doc["tags"] = {"cpln/deployTimestamp": "2026-11-26T10:00:00Z"}
    after = plan_workload(doc, gvc_doc(), LOCATIONS[:1], resolve=resolve)
    assert after[0].labels[DEPLOY_TIMESTAMP] == "2026-11-26T10:00:00Z"
    assert after[0] != before[0] and after[0].name == before[0].name


@pytest.mark.parametrize(
    ("text", "cores"), [("50m", 50), ("1", 1000), ("0.5", 500), ("2", 2000), ("1500m", 1500), ("1e0", 1000)]
)
def test_cpu_quantities(text: str, cores: int) -> None:
    assert millicores(text) == cores


@pytest.mark.parametrize(
    ("text", "size"), [("128Mi", 128 * 2**20), ("1Gi", 2**30), ("1G", 10**9), ("512Ki", 512 * 1024), ("1000", 1000)]
)
def test_memory_quantities(text: str, size: int) -> None:
    assert memory_bytes(text) == size


def test_bad_quantities_are_refused() -> None:
    for text in ("", "lots", "1Xi"):
        with pytest.raises(ValueError):
            memory_bytes(text)


def test_replicas_join_the_gvc_network_under_their_internal_names() -> None:
    specs = plan_workload(workload_doc(type_="stateful", name="db"), gvc_doc(), LOCATIONS[:1], resolve=resolve)
    assert [s.network for s in specs] == ["plinth_acme_main"] * 2
    assert [list(s.aliases) for s in specs] == [
        ["db.main.cpln.local", f"replica-{i}.db.aws-us-west-2.main.cpln.local"] for i in range(2)
    ]


def test_secret_volumes_become_files_and_a_warning_blocks_the_plan() -> None:
    doc = workload_doc()
    doc["spec"]["containers"][0]["volumes"] = [{"uri": "cpln://secret/token", "path": "/etc/token"}]
    specs = plan_workload(
        doc, gvc_doc(), LOCATIONS[:1], resolve=resolve, files=lambda ref, path: [SecretFile(path, b"x")]
    )
    assert [list(s.secret_files) for s in specs] == [[SecretFile("/etc/token", b"x")]] * 2
    doc["status"] = {"warning": "spec.containers[0].volumes[0].uri: secret 'token' does not exist"}
    with pytest.raises(Blocked, match="secret 'token' does not exist"):
        plan_workload(doc, gvc_doc(), LOCATIONS[:1], resolve=resolve)
