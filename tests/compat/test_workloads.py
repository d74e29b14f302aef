"""The official CLI's workload commands, unchanged, against a real Plinth server (SQLite here;
``test_postgres.py`` re-runs a subset on PostgreSQL). Each is checked against the stored state
afterwards, through Plinth's HTTP API."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import yaml

from tests.compat.conftest import ORG, Cpln
from tests.compat.test_typed import as_json, ok

LOCATIONS = ["//location/aws-us-east-1", "//location/gcp-us-east1"]


def gvc(api: httpx.Client, name: str) -> None:
    made = api.post(f"/org/{ORG}/gvc", json={"name": name, "spec": {"staticPlacement": {"locationLinks": LOCATIONS}}})
    assert made.status_code == 201, made.text


def test_workload_create_get_and_deployments(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    gvc(api, unique)
    args = ("--gvc", unique)
    made = as_json(
        cpln(
            "workload", "create", "--name", "web", "--image", "nginx:1.27", "--container-name", "main",
            "--env", "GREETING=hello", "--public", *args, "-o", "json",
        )
    )  # fmt: skip
    href = f"/org/{ORG}/gvc/{unique}/workload/web"
    stored = api.get(href).json()
    container = stored["spec"]["containers"][0]
    assert (container["name"], container["image"], container["ports"][0]["number"]) == ("main", "nginx:1.27", 8080)
    assert container["env"] == [{"name": "GREETING", "value": "hello"}]
    assert stored["spec"]["firewallConfig"]["external"]["inboundAllowCIDR"] == ["0.0.0.0/0"]
    assert stored["spec"]["firewallConfig"]["internal"]["inboundAllowType"] == "same-org"
    assert made["spec"] == stored["spec"]
    # `get` adds the readiness it computes from the deployments (the CLI's own fields).
    got = as_json(cpln("workload", "get", "web", *args, "-o", "json"))
    assert got["status"]["ready"] is True and got["status"]["readyLatest"] is True
    assert yaml.safe_load(ok(cpln("workload", "get", "web", *args, "-o", "yaml")).stdout)["name"] == "web"
    table = ok(cpln("workload", "get", *args, "-o", "text", "--ts", "iso")).stdout
    assert "|web " in table and "|true " in table and stored["status"]["endpoint"] in table
    assert ok(cpln("workload", "get", "--all-gvcs", "-o", "names")).stdout.split().count("web") >= 1
    deployments = as_json(cpln("workload", "get-deployments", "web", *args, "-o", "json"))
    assert [d["name"] for d in deployments["items"]] == ["aws-us-east-1", "gcp-us-east1"]
    assert all(d["status"]["ready"] for d in deployments["items"])


def test_workload_update_set_and_unset(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    gvc(api, unique)
    args = ("--gvc", unique)
    ok(cpln("workload", "create", "--name", "web", "--image", "nginx:1.27", "--env", "A=1", *args))
    href = f"/org/{ORG}/gvc/{unique}/workload/web"
    ok(cpln("workload", "update", "web", *args, "--set", "description=the front end"))
    ok(cpln("workload", "update", "web", *args, "--set", "spec.containers.nginx.image=nginx:1.28"))
    ok(cpln("workload", "update", "web", *args, "--set", "spec.containers.nginx.env.B.value=2"))
    ok(cpln("workload", "update", "web", *args, "--unset", "spec.containers.nginx.env.A"))
    cidr = "spec.firewallConfig.external.inboundAllowCIDR"
    ok(cpln("workload", "update", "web", *args, "--set", f"{cidr}+=10.0.0.0/8"))
    ok(cpln("workload", "update", "web", *args, "--set", f"{cidr}+=192.168.0.0/16"))
    ok(cpln("workload", "update", "web", *args, "--set", f"{cidr}-=10.0.0.0/8"))
    stored = api.get(href).json()
    assert stored["description"] == "the front end"
    container = stored["spec"]["containers"][0]
    assert container["image"] == "nginx:1.28"
    assert container["env"] == [{"name": "B", "value": "2"}]
    assert stored["spec"]["firewallConfig"]["external"]["inboundAllowCIDR"] == ["192.168.0.0/16"]


def test_workload_stop_start_redeploy_tag_query_clone_eventlog_delete(
    cpln: Cpln, api: httpx.Client, unique: str
) -> None:
    gvc(api, unique)
    args = ("--gvc", unique)
    ok(cpln("workload", "create", "--name", "web", "--image", "nginx:1.27", *args))
    href = f"/org/{ORG}/gvc/{unique}/workload/web"
    ok(cpln("workload", "stop", "web", *args))
    stopped = api.get(href).json()
    assert stopped["spec"]["defaultOptions"]["suspend"] is True
    assert stopped["status"]["suspendedStatus"] == "suspended" and stopped["status"]["currentReplicaCount"] == 0
    ok(cpln("workload", "start", "web", *args))
    assert api.get(href).json()["spec"]["defaultOptions"]["suspend"] is False
    ok(cpln("workload", "force-redeployment", "web", *args))
    assert "cpln/deployTimestamp" in api.get(href).json()["tags"]
    ok(cpln("workload", "tag", "web", *args, "--tag", "team=edge"))
    assert api.get(href).json()["tags"]["team"] == "edge"
    found = as_json(cpln("workload", "query", *args, "--tag", "team=edge", "-o", "json"))
    assert [w["name"] for w in found["items"]] == ["web"]
    ok(cpln("workload", "clone", "web", *args, "--name", "web-copy"))
    copy = api.get(f"/org/{ORG}/gvc/{unique}/workload/web-copy").json()
    assert copy["spec"]["containers"] == api.get(href).json()["spec"]["containers"]
    log = ok(cpln("workload", "eventlog", "web", *args, "-o", "json")).stdout
    assert [e["status"] for e in json.loads(log)["items"]].count("updated") >= 3
    ok(cpln("workload", "delete", "web", "web-copy", *args))
    assert api.get(href).status_code == 404


def test_cron_start_and_get(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    gvc(api, unique)
    body = {
        "name": "nightly",
        "spec": {
            "type": "cron",
            "job": {"schedule": "0 3 * * *"},
            "containers": [{"name": "main", "image": "busybox:1.36", "command": "date"}],
        },
    }
    assert api.post(f"/org/{ORG}/gvc/{unique}/workload", json=body).status_code == 201
    args = ("--gvc", unique)
    ok(cpln("workload", "cron", "start", "nightly", *args, "--location", "aws-us-east-1"))
    commands = api.get(f"/org/{ORG}/gvc/{unique}/workload/nightly/-command").json()["items"]
    assert [(c["type"], c["lifecycleStage"]) for c in commands] == [("runCronWorkload", "completed")]
    listed = as_json(cpln("workload", "cron", "get", "nightly", *args, "-o", "json"))
    assert [(i["location"], i["status"]) for i in listed["items"]] == [("aws-us-east-1", "successful")]


MANIFEST = """\
kind: volumeset
name: files
gvc: {gvc}
spec:
  initialCapacity: 10
  fileSystemType: shared
---
kind: workload
name: web
gvc: {gvc}
spec:
  type: standard
  containers:
    - name: app
      image: nginx:1.27
      ports:
        - number: 8080
          protocol: http
      volumes:
        - uri: cpln://volumeset/files
          path: /srv/files
  defaultOptions:
    autoscaling:
      metric: cpu
      target: 60
      minScale: 1
      maxScale: 3
---
kind: domain
name: {domain}
spec:
  ports:
    - number: 443
      protocol: http2
      routes:
        - prefix: /
          workloadLink: //gvc/{gvc}/workload/web
---
kind: policy
name: {policy}
targetKind: workload
targetLinks:
  - //gvc/{gvc}/workload/web
bindings:
  - permissions: [view]
    principalLinks: [//group/viewers]
"""


def test_apply_a_stack_waits_until_ready_and_links_resolve(
    cpln: Cpln, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    gvc(api, unique)
    domain, policy = f"{unique}.example.com", f"p-{unique}"
    manifest = tmp_path / "stack.yaml"
    manifest.write_text(MANIFEST.format(gvc=unique, domain=domain, policy=policy))
    applied = ok(cpln("apply", "--file", str(manifest), "--gvc", unique, "--ready"))
    assert f"Created /org/{ORG}/gvc/{unique}/workload/web" in applied.stdout
    base = f"/org/{ORG}/gvc/{unique}"
    assert api.get(f"{base}/volumeset/files").json()["status"]["workloadLinks"] == [f"{base}/workload/web"]
    domain_status = api.get(f"/org/{ORG}/domain/{domain}").json()["status"]
    assert {"url": f"https://{domain}/", "workloadLink": f"{base}/workload/web"} in domain_status["endpoints"]
    assert "warning" not in domain_status
    workload = api.get(f"{base}/workload/web").json()
    again = ok(cpln("apply", "--file", str(manifest), "--gvc", unique))
    assert "Updated workload 'web'" in again.stdout
    assert api.get(f"{base}/workload/web").json()["version"] == workload["version"]  # a no-op


K8S = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
spec:
  replicas: 2
  selector:
    matchLabels: {app: hello}
  template:
    metadata:
      labels: {app: hello}
    spec:
      containers:
        - name: hello
          image: nginx:1.27
          ports:
            - containerPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: hello
spec:
  selector: {app: hello}
  ports:
    - port: 80
      targetPort: 8080
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 1
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
        - name: postgres
          image: postgres:16
          ports:
            - containerPort: 5432
          volumeMounts:
            - name: data
              mountPath: /var/lib/postgresql/data
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: 10Gi
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: report
              image: busybox:1.36
              command: ["sh", "-c", "date"]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: shared-files
spec:
  accessModes: [ReadWriteMany]
  resources:
    requests:
      storage: 20Gi
"""


def test_apply_kubernetes_manifests(cpln: Cpln, api: httpx.Client, unique: str, tmp_path: Path) -> None:
    gvc(api, unique)
    manifest = tmp_path / "k8s.yaml"
    manifest.write_text(K8S)
    ok(cpln("apply", "--k8s", "true", "--file", str(manifest), "--gvc", unique))
    base = f"/org/{ORG}/gvc/{unique}"
    stored = api.get(f"{base}/workload/hello").json()
    assert stored["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert stored["spec"]["containers"][0]["ports"][0]["number"] == 8080
    # A StatefulSet's claim template becomes an ext4 volume set its stateful workload mounts.
    db = api.get(f"{base}/workload/db").json()
    assert db["spec"]["type"] == "stateful"
    assert db["spec"]["containers"][0]["volumes"][0]["uri"] == "cpln://volumeset/db-data"
    assert api.get(f"{base}/volumeset/db-data").json()["status"]["workloadLinks"] == [f"{base}/workload/db"]
    report = api.get(f"{base}/workload/report").json()
    assert (report["spec"]["type"], report["spec"]["job"]["schedule"]) == ("cron", "0 3 * * *")
    assert api.get(f"{base}/volumeset/shared-files").json()["spec"]["initialCapacity"] == 20


def test_gvc_delete_force_deletes_its_workloads(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    gvc(api, unique)
    ok(cpln("workload", "create", "--name", "web", "--image", "nginx:1.27", "--gvc", unique))
    # Without --force the server answers 409 naming the workload (tests/api/test_workloads.py);
    # the CLI retries a DELETE's 409 ten times with backoff before it gives up, so not run here.
    ok(cpln("gvc", "delete", unique, "--force"))
    assert api.get(f"/org/{ORG}/gvc/{unique}").status_code == 404
