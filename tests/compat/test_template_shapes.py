"""``cpln apply --file`` (the official CLI, unchanged) of documents in two shapes of the vendor's
template catalog that Plinth once refused, then the same file again (no change) and
``cpln delete --file``. SQLite here; ``test_postgres.py`` re-runs it on PostgreSQL.

The documents are written for this test in the shapes of controlplane-com/templates (the Helm
charts the console installs), not copied from them:

- standard and stateful workloads parked at ``minScale: 0, maxScale: 0`` and run in one
  location by ``localOptions`` (grafana-multi-location .../workload-alerting.yaml,
  manticore .../workload.yaml, tidb .../workload-pd.yaml);
- a cron workload suspended in ``defaultOptions`` and un-suspended in one location by
  ``localOptions`` (cockroach .../workload-backup.yaml and six other charts' backup crons).

See docs/api.md ("Workloads") and docs/validation-audit.md.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.compat.applying import apply_creating, delete_all, reapply_unchanged
from tests.compat.conftest import ORG, Cpln

STACK = """\
kind: gvc
name: {u}
spec:
  staticPlacement:
    locationLinks:
      - //location/aws-us-east-1
      - //location/gcp-us-east1
---
kind: workload
name: alerting
gvc: {u}
spec:
  type: standard
  containers:
    - name: grafana
      image: 'nginx:1.27'
      ports:
        - number: 3000
          protocol: http
  defaultOptions:
    autoscaling:
      metric: cpu
      target: 95
      minScale: 0
      maxScale: 0
    capacityAI: false
  localOptions:
    - location: //location/aws-us-east-1
      autoscaling:
        metric: disabled
        minScale: 1
        maxScale: 1
---
kind: workload
name: pd
gvc: {u}
spec:
  type: stateful
  containers:
    - name: pd
      image: 'nginx:1.27'
      ports:
        - number: 2379
          protocol: tcp
  defaultOptions:
    autoscaling:
      metric: disabled
      minScale: 0
      maxScale: 0
    capacityAI: false
  localOptions:
    - location: //location/gcp-us-east1
      autoscaling:
        metric: disabled
        minScale: 1
        maxScale: 1
---
kind: workload
name: backup
gvc: {u}
spec:
  type: cron
  containers:
    - name: backup
      image: 'busybox:1.36'
      command: /bin/sh
      args:
        - '-c'
        - 'echo backed up'
  defaultOptions:
    suspend: true
  localOptions:
    - location: //location/aws-us-east-1
      suspend: false
  job:
    schedule: '0 3 * * *'
    concurrencyPolicy: Forbid
    restartPolicy: Never
"""


def test_apply_of_the_template_shapes_stores_them_as_sent(
    cpln: Cpln, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "template-shapes.yaml"
    manifest.write_text(STACK.format(u=unique))
    gvc = f"/org/{ORG}/gvc/{unique}"
    links = [gvc, f"{gvc}/workload/alerting", f"{gvc}/workload/pd", f"{gvc}/workload/backup"]

    items = apply_creating(cpln, api, manifest, links)
    alerting, pd, backup = (items[f"{gvc}/workload/{name}"] for name in ("alerting", "pd", "backup"))
    parked = alerting["spec"]["defaultOptions"]["autoscaling"]
    assert (parked["metric"], parked["minScale"], parked["maxScale"]) == ("cpu", 0, 0)
    assert alerting["spec"]["localOptions"][0]["autoscaling"] == {"metric": "disabled", "minScale": 1, "maxScale": 1}
    assert (pd["spec"]["defaultOptions"]["autoscaling"]["minScale"], pd["spec"]["type"]) == (0, "stateful")
    assert backup["spec"]["localOptions"] == [{"location": f"/org/{ORG}/location/aws-us-east-1", "suspend": False}]
    assert backup["status"]["suspendedStatus"] == "partiallySuspended"

    reapply_unchanged(cpln, api, manifest, items)  # stored as sent, so applying it again changes nothing

    delete_all(cpln, api, manifest, links)
