"""``cpln apply --file`` (the official CLI, unchanged) of documents holding the three shapes the
vendor's own stacks use and Plinth once refused (issue 20), then the same file again (no change)
and ``cpln delete --file``. SQLite here; ``test_postgres.py`` re-runs it on PostgreSQL.

The documents are written for this test; their shapes are those of the vendor's public example
stacks (github.com/controlplane-com/examples, Apache-2.0), not copies of them:

- a stateful workload whose ``rolloutOptions`` hold ``maxUnavailableReplicas: '1'`` beside
  ``maxSurgeReplicas: 25%`` and ``scalingPolicy: OrderedReady`` (examples/mysql/mysql.yaml and
  eight other stacks);
- a standard workload with ``autoscaling.metric: concurrency`` (what the TF provider sends by
  default, terraform-provider-cpln internal/provider/resource_workload.go ``ModifyAutoscaling``);
- ``firewallConfig.internal.inboundAllowWorkload`` entries ``//workload/NAME`` under
  ``inboundAllowType: workload-list`` (examples/online-boutique/online-boutique.yaml).
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
---
kind: workload
name: db
gvc: {u}
spec:
  type: stateful
  containers:
    - name: mysql
      image: 'mysql:5.7'
      cpu: 300m
      memory: 700Mi
      ports:
        - number: 3306
          protocol: tcp
  defaultOptions:
    autoscaling:
      metric: disabled
      minScale: 1
      maxScale: 1
    capacityAI: false
  firewallConfig:
    internal:
      inboundAllowType: same-gvc
  rolloutOptions:
    maxSurgeReplicas: 25%
    maxUnavailableReplicas: '1'
    minReadySeconds: 0
    scalingPolicy: OrderedReady
---
kind: workload
name: frontend
gvc: {u}
spec:
  type: standard
  containers:
    - name: server
      image: 'nginx:1.27'
      ports:
        - number: 8080
          protocol: http
  defaultOptions:
    autoscaling:
      metric: concurrency
      target: 95
      minScale: 1
      maxScale: 3
    capacityAI: false
  firewallConfig:
    external:
      inboundAllowCIDR:
        - 0.0.0.0/0
    internal:
      inboundAllowType: workload-list
      inboundAllowWorkload:
        - //workload/loadgenerator
---
kind: workload
name: cart
gvc: {u}
spec:
  type: serverless
  containers:
    - name: server
      image: 'nginx:1.27'
      ports:
        - number: 7070
          protocol: http
  firewallConfig:
    internal:
      inboundAllowType: workload-list
      inboundAllowWorkload:
        - //workload/checkout
        - //workload/frontend
"""


def test_apply_of_the_vendor_shapes_stores_them_as_sent(
    cpln: Cpln, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "vendor-shapes.yaml"
    manifest.write_text(STACK.format(u=unique))
    gvc = f"/org/{ORG}/gvc/{unique}"
    links = [gvc, f"{gvc}/workload/db", f"{gvc}/workload/frontend", f"{gvc}/workload/cart"]

    items = apply_creating(cpln, api, manifest, links)
    db, frontend, cart = (items[f"{gvc}/workload/{name}"]["spec"] for name in ("db", "frontend", "cart"))
    assert db["rolloutOptions"] == {
        "maxSurgeReplicas": "25%",
        "maxUnavailableReplicas": "1",
        "minReadySeconds": 0,
        "scalingPolicy": "OrderedReady",
        "terminationGracePeriodSeconds": 90,  # the default inside a sent block (docs/api.md)
    }
    assert frontend["defaultOptions"]["autoscaling"]["metric"] == "concurrency"
    assert frontend["firewallConfig"]["internal"]["inboundAllowWorkload"] == ["//workload/loadgenerator"]
    assert cart["firewallConfig"]["internal"]["inboundAllowWorkload"] == ["//workload/checkout", "//workload/frontend"]

    reapply_unchanged(cpln, api, manifest, items)  # stored as sent, so applying it again changes nothing

    delete_all(cpln, api, manifest, links)
