"""Workloads over real HTTP on both backends: status and links, deployments from the simulated
runtime, commands, and the links between workloads, volume sets and GVCs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.authz_support import assert_forbidden, bearer, service_account_with_key
from tests.api.conftest import BACKENDS
from tests.support.server import serving

LOCATIONS = ["//location/aws-us-east-1", "//location/gcp-us-east1"]


def container(name: str = "app", image: str = "nginx:latest") -> dict[str, Any]:
    return {"name": name, "image": image}


def make_gvc(api: httpx.Client, name: str, locations: list[str] = LOCATIONS) -> dict[str, Any]:
    made = api.post("/org/acme/gvc", json={"name": name, "spec": {"staticPlacement": {"locationLinks": locations}}})
    assert made.status_code == 201, made.text
    return api.get(f"/org/acme/gvc/{name}").json()  # type: ignore[no-any-return]


def make_workload(api: httpx.Client, gvc: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {"name": name, "spec": {"containers": [container()], **spec}}
    made = api.post(f"/org/acme/gvc/{gvc}/workload", json=body)
    assert made.status_code == 201, made.text
    assert made.headers["location"] == f"/org/acme/gvc/{gvc}/workload/{name}"
    return made.json()  # type: ignore[no-any-return]


def test_status_and_links_are_computed_by_the_server(api: httpx.Client, unique: str) -> None:
    gvc = make_gvc(api, unique)
    made = make_workload(api, unique, "web")
    href = f"/org/acme/gvc/{unique}/workload/web"
    assert {"rel": "deployment", "href": f"{href}/deployment"} in made["links"]
    assert {"rel": "gvc", "href": f"/org/acme/gvc/{unique}"} in made["links"]
    status = made["status"]
    assert status["parentId"] == gvc["id"]
    assert status["canonicalEndpoint"] == f"https://web-{gvc['alias']}.cpln.app"
    assert status["endpoint"] == status["canonicalEndpoint"]
    assert status["internalName"] == f"web.{unique}.cpln.local"
    assert status["ready"] is True and status["suspendedStatus"] == "notSuspended"
    assert status["currentReplicaCount"] >= 2  # at least one replica in each of the two locations
    assert status["resolvedImages"]["images"] == [{"manifests": [{"image": "nginx:latest"}]}]
    assert api.get(href).json() == made


def test_deployments_report_the_latest_version_ready_in_every_location(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "web")
    href = f"/org/acme/gvc/{unique}/workload/web"
    patched = api.patch(href, json={"description": "second version"}).json()
    listed = api.get(f"{href}/deployment").json()
    assert (listed["kind"], listed["itemKind"]) == ("list", "deployment")
    assert [d["name"] for d in listed["items"]] == ["aws-us-east-1", "gcp-us-east1"]
    for deployment in listed["items"]:
        status = deployment["status"]
        # An object (the official CLI reads internal.syncFailed with no null check), and empty:
        # nothing failed to sync, and cpln-py refuses keys it does not know inside it.
        assert status["ready"] is True and status["internal"] == {}
        assert status["lastProcessedVersion"] == status["expectedDeploymentVersion"] == patched["version"] == 2
        assert [v["workload"] for v in status["versions"]] == [2] and status["versions"][0]["ready"]
        assert status["versions"][0]["containers"]["app"]["image"] == "nginx:latest"
    one = api.get(f"{href}/deployment/gcp-us-east1").json()
    assert one == listed["items"][1]
    missing = api.get(f"{href}/deployment/azure-eastus2")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    assert api.post(f"{href}/deployment", json={}).status_code == 405


def test_suspending_stops_every_replica(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "web")
    href = f"/org/acme/gvc/{unique}/workload/web"
    # The official CLI's `workload stop` body.
    stopped = api.patch(href, json={"spec": {"defaultOptions": {"suspend": True}}})
    assert stopped.status_code == 200, stopped.text
    assert stopped.json()["status"]["suspendedStatus"] == "suspended"
    assert stopped.json()["status"]["currentReplicaCount"] == 0
    for deployment in api.get(f"{href}/deployment").json()["items"]:
        assert deployment["status"]["versions"][0]["containers"]["app"]["resources"]["replicas"] == 0


def test_commands_run_and_complete_and_show_as_job_executions(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "nightly", type="cron", job={"schedule": "0 3 * * *"})
    href = f"/org/acme/gvc/{unique}/workload/nightly"
    sent = api.post(f"{href}/-command", json={"type": "runCronWorkload", "spec": {"location": "aws-us-east-1"}})
    assert sent.status_code == 201, sent.text
    command_id = sent.headers["location"].rsplit("/", 1)[-1]
    assert sent.headers["location"] == f"{href}/-command/{command_id}"
    command = api.get(f"{href}/-command/{command_id}").json()
    assert (command["id"], command["kind"], command["lifecycleStage"]) == (command_id, "command", "completed")
    assert command["spec"] == {"location": "aws-us-east-1"}
    listed = api.get(f"{href}/-command").json()
    assert [c["id"] for c in listed["items"]] == [command_id]
    by_location = {d["name"]: d for d in api.get(f"{href}/deployment").json()["items"]}
    executions = by_location["aws-us-east-1"]["status"]["jobExecutions"]
    assert [(e["name"], e["status"]) for e in executions] == [(f"command-{command_id}", "successful")]
    assert by_location["gcp-us-east1"]["status"]["jobExecutions"] == []


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"type": "runCronWorkload", "spec": {"location": "mars-1"}}, "spec.location"),
        ({"type": "launch", "spec": {"location": "aws-us-east-1"}}, "type"),
        ({"type": "stopReplica", "spec": {}}, "spec.location"),
    ],
)
def test_bad_commands_are_refused_and_nothing_is_stored(
    api: httpx.Client, unique: str, body: dict[str, Any], path: str
) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "nightly", type="cron", job={"schedule": "0 3 * * *"})
    href = f"/org/acme/gvc/{unique}/workload/nightly"
    refused = api.post(f"{href}/-command", json=body)
    assert refused.status_code == 400, refused.text
    assert path in [e["path"] for e in refused.json()["details"]["errors"]]
    assert api.get(f"{href}/-command").json()["items"] == []


def test_a_command_made_is_the_one_listed_and_read_by_its_id(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique, ["//location/aws-us-east-1"])
    make_workload(api, unique, "web")
    href = f"/org/acme/gvc/{unique}/workload/web"
    listed = api.get(f"{href}/deployment").json()
    assert [d["name"] for d in listed["items"]] == ["aws-us-east-1"]
    assert api.get(f"{href}/deployment/aws-us-east-1").status_code == 200
    assert api.get(f"{href}/deployment/nowhere-1").status_code == 404
    made = api.post(f"{href}/-command", json={"type": "stopReplica", "spec": {"location": "aws-us-east-1"}})
    assert made.status_code == 201, made.text
    cron = {"type": "runCronWorkload", "spec": {"location": "aws-us-east-1"}}
    assert api.post(f"{href}/-command", json=cron).status_code == 400  # a standard workload
    assert api.post(f"{href}/-command", json={}).status_code == 400
    commands = api.get(f"{href}/-command").json()
    assert [c["id"] for c in commands["items"]] == [made.json()["id"]]
    assert api.get(f"{href}/-command/{made.json()['id']}").status_code == 200
    assert api.get(f"{href}/-command/no-such-command").status_code == 404


def test_run_cron_workload_needs_a_cron_workload(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "web")
    body = {"type": "runCronWorkload", "spec": {"location": "aws-us-east-1"}}
    refused = api.post(f"/org/acme/gvc/{unique}/workload/web/-command", json=body)
    assert refused.status_code == 400 and refused.json()["details"]["errors"][0]["path"] == "type"
    stop = {"type": "stopReplica", "spec": {"location": "aws-us-east-1", "replica": "web-0"}}
    assert api.post(f"/org/acme/gvc/{unique}/workload/web/-command", json=stop).status_code == 201


def test_commands_need_their_exec_permission(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "web")
    href = f"/org/acme/gvc/{unique}/workload/web"
    key = service_account_with_key(api, "acme", f"op-{unique}")
    grant = {
        "name": f"view-{unique}",
        "targetKind": "workload",
        "targetLinks": [f"//gvc/{unique}/workload/web"],
        "bindings": [{"permissions": ["view"], "principalLinks": [f"//serviceaccount/op-{unique}"]}],
    }
    assert api.post("/org/acme/policy", json=grant).status_code == 201
    stop = {"type": "stopReplica", "spec": {"location": "aws-us-east-1"}}
    assert api.get(f"{href}/deployment", headers=bearer(key)).status_code == 200
    assert_forbidden(api.post(f"{href}/-command", json=stop, headers=bearer(key)), "exec.stopReplica")
    assert api.get(f"{href}/-command").json()["items"] == []
    # exec implies exec.stopReplica (docs.controlplane.com/reference/workload/security).
    exec_grant = {"bindings": [{"permissions": ["view", "exec"], "principalLinks": [f"//serviceaccount/op-{unique}"]}]}
    assert api.patch(f"/org/acme/policy/view-{unique}", json=exec_grant).status_code == 200
    assert api.post(f"{href}/-command", json=stop, headers=bearer(key)).status_code == 201


def test_a_direct_load_balancer_needs_configure_load_balancer_which_edit_does_not_give(
    api: httpx.Client, unique: str
) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "web")
    href = f"/org/acme/gvc/{unique}/workload/web"
    key = service_account_with_key(api, "acme", f"lb-{unique}")
    principal = f"//serviceaccount/lb-{unique}"
    grant = {
        "name": f"lb-{unique}",
        "targetKind": "workload",
        "targetLinks": [f"//gvc/{unique}/workload/web"],
        "bindings": [{"permissions": ["edit"], "principalLinks": [principal]}],
    }
    assert api.post("/org/acme/policy", json=grant).status_code == 201
    assert api.patch(href, json={"description": "edited"}, headers=bearer(key)).status_code == 200
    direct = {"enabled": True, "ports": [{"externalPort": 5432, "protocol": "TCP", "containerPort": 8080}]}
    change = {"spec": {"loadBalancer": {"direct": direct}}}
    assert_forbidden(api.patch(href, json=change, headers=bearer(key)), "configureLoadBalancer")
    assert "loadBalancer" not in api.get(href).json()["spec"]
    more = {"bindings": [{"permissions": ["edit", "configureLoadBalancer"], "principalLinks": [principal]}]}
    assert api.patch(f"/org/acme/policy/lb-{unique}", json=more).status_code == 200
    done = api.patch(href, json=change, headers=bearer(key))
    assert done.status_code == 200, done.text
    assert done.json()["spec"]["loadBalancer"]["direct"]["enabled"] is True


def test_deleting_a_workload_deletes_its_commands(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "nightly", type="cron", job={"schedule": "0 3 * * *"})
    href = f"/org/acme/gvc/{unique}/workload/nightly"
    body = {"type": "runCronWorkload", "spec": {"location": "aws-us-east-1"}}
    command_id = api.post(f"{href}/-command", json=body).headers["location"].rsplit("/", 1)[-1]
    assert api.delete(href).status_code == 202
    make_workload(api, unique, "nightly", type="cron", job={"schedule": "0 3 * * *"})
    assert api.get(f"{href}/-command").json()["items"] == []
    assert api.get(f"{href}/-command/{command_id}").status_code == 404


def test_a_volume_set_lists_the_workloads_that_mount_it_and_is_protected_while_they_do(
    api: httpx.Client, unique: str
) -> None:
    make_gvc(api, unique)
    base = f"/org/acme/gvc/{unique}"
    assert (
        api.post(
            f"{base}/volumeset", json={"name": "files", "spec": {"initialCapacity": 10, "fileSystemType": "shared"}}
        ).status_code
        == 201
    )
    mount = {"name": "app", "image": "nginx:latest", "volumes": [{"uri": "cpln://volumeset/files", "path": "/data"}]}
    made = api.post(f"{base}/workload", json={"name": "web", "spec": {"containers": [mount]}})
    assert made.status_code == 201, made.text
    assert made.json()["spec"]["containers"][0]["volumes"][0]["uri"] == "cpln://volumeset/files"
    assert api.get(f"{base}/volumeset/files").json()["status"]["workloadLinks"] == [f"{base}/workload/web"]
    refused = api.delete(f"{base}/volumeset/files")
    assert refused.status_code == 409 and "workload/web" in refused.json()["message"]
    # Unmounting (a PATCH that replaces the containers) lets the volume set go.
    unmounted = api.patch(f"{base}/workload/web", json={"spec": {"containers": [container()]}})
    assert unmounted.status_code == 200, unmounted.text
    assert api.get(f"{base}/volumeset/files").json()["status"]["workloadLinks"] == []
    assert api.delete(f"{base}/volumeset/files").status_code == 202


def test_mounting_a_missing_or_per_replica_volume_set(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    base = f"/org/acme/gvc/{unique}"
    assert (
        api.post(
            f"{base}/volumeset", json={"name": "disk", "spec": {"initialCapacity": 10, "fileSystemType": "ext4"}}
        ).status_code
        == 201
    )

    def mounting(uri: str, kind: str = "standard") -> httpx.Response:
        app = {"name": "app", "image": "postgres:16", "volumes": [{"uri": uri, "path": "/var/lib/data"}]}
        return api.post(f"{base}/workload", json={"name": f"db-{kind}", "spec": {"type": kind, "containers": [app]}})

    missing = mounting("cpln://volumeset/nope")
    assert missing.status_code == 400
    assert missing.json()["details"]["errors"][0]["path"] == "spec.containers[0].volumes[0].uri"
    ext4 = mounting("cpln://volumeset/disk")
    assert ext4.status_code == 400 and "stateful" in ext4.json()["details"]["errors"][0]["message"]
    assert mounting("cpln://volumeset/disk", "stateful").status_code == 201


def test_a_domain_routed_to_a_missing_workload_is_accepted_with_a_warning(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    name = f"{unique}.example.com"
    route = {"prefix": "/", "workloadLink": f"//gvc/{unique}/workload/web"}
    made = api.post("/org/acme/domain", json={"name": name, "spec": {"ports": [{"routes": [route]}]}})
    assert made.status_code == 201, made.text
    href = f"/org/acme/gvc/{unique}/workload/web"
    assert href in made.json()["status"]["warning"] and made.json()["status"]["status"] == "warning"
    make_workload(api, unique, "web")
    arrived = api.get(f"/org/acme/domain/{name}").json()["status"]
    assert "warning" not in arrived and arrived["endpoints"][0]["workloadLink"] == href
    assert api.delete(href).status_code == 202
    assert href in api.get(f"/org/acme/domain/{name}").json()["status"]["warning"]


def test_deleting_a_gvc_that_holds_workloads_names_them(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "web")
    refused = api.delete(f"/org/acme/gvc/{unique}")
    assert refused.status_code == 409 and "workload/web" in refused.json()["message"]
    assert api.delete(f"/org/acme/gvc/{unique}/workload/web").status_code == 202
    assert api.delete(f"/org/acme/gvc/{unique}").status_code == 202


def test_short_identity_link_is_stored_in_full_and_the_gvc_object_is_ignored(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    assert api.post(f"/org/acme/gvc/{unique}/identity", json={"name": "reader"}).status_code == 201
    body = {"name": "web", "gvc": {}, "spec": {"identityLink": "//identity/reader", "containers": [container()]}}
    made = api.post(f"/org/acme/gvc/{unique}/workload", json=body)
    assert made.status_code == 201, made.text
    assert made.json()["spec"]["identityLink"] == f"/org/acme/gvc/{unique}/identity/reader"
    other = {"name": "web2", "spec": {"identityLink": "//gvc/elsewhere/identity/x", "containers": [container()]}}
    refused = api.post(f"/org/acme/gvc/{unique}/workload", json=other)
    assert refused.status_code == 400 and refused.json()["details"]["errors"][0]["path"] == "spec.identityLink"
    wrong_gvc = {"name": "web3", "gvc": "elsewhere", "spec": {"containers": [container()]}}
    refused = api.post(f"/org/acme/gvc/{unique}/workload", json=wrong_gvc)
    assert refused.status_code == 400 and refused.json()["details"]["errors"][0]["path"] == "gvc"


def test_volume_sets_accept_the_gvc_object_the_vendor_examples_send(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    body = {"name": "data", "gvc": {}, "spec": {"initialCapacity": 10}}
    assert api.post(f"/org/acme/gvc/{unique}/volumeset", json=body).status_code == 201


def test_org_wide_list_query_eventlog_and_dry_run(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    make_workload(api, unique, "web")
    href = f"/org/acme/gvc/{unique}/workload/web"
    everywhere = [w["name"] for w in api.get("/org/acme/workload?limit=1000").json()["items"]]
    assert "web" in everywhere
    query = {"spec": {"terms": [{"rel": "gvc", "value": unique}]}}
    found = api.post("/org/acme/workload/-query", json=query).json()["items"]
    assert [w["gvc"] for w in found] == [unique]
    in_gvc = api.post(f"/org/acme/gvc/{unique}/workload/-query", json={}).json()["items"]
    assert [w["name"] for w in in_gvc] == ["web"]
    assert [e["status"] for e in api.get(f"{href}/-eventlog").json()["items"]] == ["created"]
    dry = api.post(
        f"/org/acme/gvc/{unique}/workload?dryRun=true", json={"name": "ghost", "spec": {"containers": [container()]}}
    )
    assert dry.status_code == 200 and dry.json()["name"] == "ghost"
    assert api.get(f"/org/acme/gvc/{unique}/workload/ghost").status_code == 404


def test_schema_and_rule_errors_come_back_together(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    body = {
        "name": "web",
        "spec": {
            "containers": [container(), {"name": "app", "image": "nginx", "cpu": "lots"}],
            "identityLink": "//gvc/elsewhere/identity/x",
        },
    }
    refused = api.post(f"/org/acme/gvc/{unique}/workload", json=body)
    assert refused.status_code == 400
    paths = [e["path"] for e in refused.json()["details"]["errors"]]
    assert "spec.containers[1].cpu" in paths  # a schema error
    assert "spec.identityLink" in paths  # a rule on what is left of the spec


@pytest.fixture(scope="module", params=BACKENDS)
def bare(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A server with no runtime attached and its own base domain."""
    args = ("--runtime", "none", "--base-domain", "apps.example.net")
    with serving(request.param, tmp_path_factory.mktemp("bare"), args) as proc, proc.client() as client:
        yield client


def test_without_a_runtime_nothing_is_ready_and_the_deployments_say_why(bare: httpx.Client) -> None:
    gvc = make_gvc(bare, "main")
    made = make_workload(bare, "main", "web")
    assert made["status"]["ready"] is False and made["status"]["currentReplicaCount"] == 0
    assert made["status"]["canonicalEndpoint"] == f"https://web-{gvc['alias']}.apps.example.net"
    for deployment in bare.get("/org/acme/gvc/main/workload/web/deployment").json()["items"]:
        assert deployment["status"]["ready"] is False
        assert "no runtime is attached" in deployment["status"]["message"].lower()
        assert deployment["status"]["endpoint"].endswith(".apps.example.net")
    # The same setting names the GVC target a domain's CNAME points at.
    route = {"prefix": "/", "workloadLink": "//gvc/main/workload/web"}
    domain = bare.post("/org/acme/domain", json={"name": "web.example.org", "spec": {"ports": [{"routes": [route]}]}})
    cnames = [r["value"] for r in domain.json()["status"]["dnsConfig"] if r["type"] == "CNAME"]
    assert cnames == [f"{gvc['alias']}.t.apps.example.net"]


def test_workloads_mounting_one_volume_set_at_once_are_all_listed(api: httpx.Client, unique: str) -> None:
    """Writers race to refresh the same volume set's status; none of them may be lost."""
    from concurrent.futures import ThreadPoolExecutor

    make_gvc(api, unique)
    base = f"/org/acme/gvc/{unique}"
    files = {"name": "files", "spec": {"initialCapacity": 10, "fileSystemType": "shared"}}
    assert api.post(f"{base}/volumeset", json=files).status_code == 201
    mount = {"name": "app", "image": "nginx:latest", "volumes": [{"uri": "cpln://volumeset/files", "path": "/data"}]}
    names = [f"w{i:02d}" for i in range(12)]

    def create(name: str) -> int:
        with httpx.Client(base_url=str(api.base_url), headers=dict(api.headers)) as own:
            return own.post(f"{base}/workload", json={"name": name, "spec": {"containers": [mount]}}).status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(create, names)) == [201] * len(names)
    listed = api.get(f"{base}/volumeset/files").json()["status"]["workloadLinks"]
    assert listed == [f"{base}/workload/{name}" for name in names]

    def delete(name: str) -> int:
        with httpx.Client(base_url=str(api.base_url), headers=dict(api.headers)) as own:
            return own.delete(f"{base}/workload/{name}").status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(delete, names[:6])) == [202] * 6
    listed = api.get(f"{base}/volumeset/files").json()["status"]["workloadLinks"]
    assert listed == [f"{base}/workload/{name}" for name in names[6:]]


def test_workloads_a_domain_routes_to_arriving_at_once_clear_its_warning(api: httpx.Client, unique: str) -> None:
    """Each workload's write refreshes the domain's status from what it read; the last must win."""
    from concurrent.futures import ThreadPoolExecutor

    make_gvc(api, unique)
    names = [f"w{i:02d}" for i in range(8)]
    routes = [{"prefix": f"/{name}", "workloadLink": f"//gvc/{unique}/workload/{name}"} for name in names]
    domain = f"{unique}.example.com"
    assert (
        api.post("/org/acme/domain", json={"name": domain, "spec": {"ports": [{"routes": routes}]}}).status_code == 201
    )

    def create(name: str) -> int:
        with httpx.Client(base_url=str(api.base_url), headers=dict(api.headers)) as own:
            body = {"name": name, "spec": {"containers": [container()]}}
            return own.post(f"/org/acme/gvc/{unique}/workload", json=body).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(create, names)) == [201] * len(names)
    assert "warning" not in api.get(f"/org/acme/domain/{domain}").json()["status"]
