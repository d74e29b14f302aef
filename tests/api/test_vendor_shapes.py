"""Shapes the live API accepts and Plinth once refused, over real HTTP on both backends (issue 20).

The three rules relaxed for the vendor's own stacks (controlplane-com/examples) and the TF
provider's defaults, and the two things the published Python SDK cpln-py 1.2.4 sends:

- ``rolloutOptions.maxUnavailableReplicas`` on a stateful workload (nine vendor stacks, e.g.
  examples/mysql/mysql.yaml) is stored and served as sent;
- ``autoscaling.metric: concurrency`` on standard and stateful workloads (the TF provider's
  default metric for every workload without multi or KEDA) is stored as sent;
- ``firewallConfig.internal.inboundAllowWorkload`` entries ``//workload/NAME`` (a workload of
  the same GVC, as examples/online-boutique/online-boutique.yaml sends them) are stored as sent;
- ``defaultOptions.suspend: "true"`` (cpln-py's ``Workload.suspend``) suspends, stored as ``true``;
- a body ``gvc`` of ``"$GVC"`` (cpln-py's unreplaced template placeholder) is ignored, the
  path deciding, while a body naming another GVC stays a 400 (``test_workloads.py``).

See docs/api.md ("Workloads") and docs/validation-audit.md.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.shapes_support import make_gvc, put_twice


def workload(name: str, type_: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "app", "image": "nginx:1.27", "ports": [{"number": 8080, "protocol": "http"}]}
    return {"name": name, "spec": {"type": type_, "containers": [container], **spec}}


def test_max_unavailable_replicas_on_stateful_is_stored_as_sent(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    # The rollout block of the vendor's stateful stacks (e.g. examples/mysql/mysql.yaml).
    rollout = {
        "maxSurgeReplicas": "25%",
        "maxUnavailableReplicas": "1",
        "minReadySeconds": 0,
        "scalingPolicy": "OrderedReady",
    }
    stored = put_twice(api, unique, workload("db", "stateful", rolloutOptions=rollout))
    assert stored["spec"]["rolloutOptions"]["maxUnavailableReplicas"] == "1"
    assert stored["spec"]["rolloutOptions"]["maxSurgeReplicas"] == "25%"
    # Meaningless on stateful, so both zero cannot stall anything there either.
    zero = {"spec": {"rolloutOptions": {"maxUnavailableReplicas": "0", "maxSurgeReplicas": "0"}}}
    patched = api.patch(f"/org/acme/gvc/{unique}/workload/db", json=zero)
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"]["rolloutOptions"]["maxUnavailableReplicas"] == "0"


def test_both_zero_is_still_refused_on_standard(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    body = workload("web", "standard", rolloutOptions={"maxUnavailableReplicas": "0", "maxSurgeReplicas": "0"})
    refused = api.post(f"/org/acme/gvc/{unique}/workload", json=body)
    assert refused.status_code == 400
    assert [e["path"] for e in refused.json()["details"]["errors"]] == ["spec.rolloutOptions.maxUnavailableReplicas"]


def test_concurrency_metric_on_standard_and_stateful_is_stored_as_sent(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    # What the TF provider sends by default: metric concurrency, target 95.
    options = {"autoscaling": {"metric": "concurrency", "target": 95, "minScale": 1, "maxScale": 3}}
    for name, type_ in (("web", "standard"), ("db", "stateful")):
        stored = put_twice(api, unique, workload(name, type_, defaultOptions=options))
        assert stored["spec"]["defaultOptions"]["autoscaling"]["metric"] == "concurrency", type_
        local = [{"location": "aws-us-east-1", "autoscaling": {"metric": "concurrency"}}]
        patched = api.patch(f"/org/acme/gvc/{unique}/workload/{name}", json={"spec": {"localOptions": local}})
        assert patched.status_code == 200, patched.text
        assert patched.json()["spec"]["localOptions"][0]["autoscaling"] == {"metric": "concurrency"}


def test_same_gvc_workload_links_are_stored_as_sent(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    internal = {
        "inboundAllowType": "workload-list",
        "inboundAllowWorkload": ["//workload/frontend", f"//gvc/{unique}/workload/checkout"],
    }
    stored = put_twice(api, unique, workload("cart", "serverless", firewallConfig={"internal": internal}))
    assert stored["spec"]["firewallConfig"]["internal"] == internal
    # A link to a workload with no GVC at all (an org-level path) is still not a workload link.
    bad = {"inboundAllowType": "workload-list", "inboundAllowWorkload": ["/org/acme/workload/frontend"]}
    refused = api.post(
        f"/org/acme/gvc/{unique}/workload", json=workload("other", "serverless", firewallConfig={"internal": bad})
    )
    assert refused.status_code == 400
    paths = [e["path"] for e in refused.json()["details"]["errors"]]
    assert paths == ["spec.firewallConfig.internal.inboundAllowWorkload[0]"]
    # Nothing resolves these links: the workload they name may be deleted and created freely.
    assert api.get(f"/org/acme/gvc/{unique}/workload/frontend").status_code == 404


def test_suspend_as_the_string_cpln_py_sends(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    assert api.post(f"/org/acme/gvc/{unique}/workload", json=workload("web", "standard")).status_code == 201
    href = f"/org/acme/gvc/{unique}/workload/web"
    for text, flag, status in (("true", True, "suspended"), ("false", False, "notSuspended")):
        patched = api.patch(href, json={"spec": {"defaultOptions": {"suspend": text}}})
        assert patched.status_code == 200, patched.text
        assert patched.json()["spec"]["defaultOptions"]["suspend"] is flag
        assert api.get(href).json()["status"]["suspendedStatus"] == status
    refused = api.patch(href, json={"spec": {"defaultOptions": {"suspend": "yes"}}})
    assert refused.status_code == 400
    assert [e["path"] for e in refused.json()["details"]["errors"]] == ["spec.defaultOptions.suspend"]
    assert api.get(href).json()["spec"]["defaultOptions"]["suspend"] is False  # the 400 changed nothing


def test_a_placeholder_gvc_in_the_body_is_ignored(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    body = {**workload("web", "serverless"), "gvc": "$GVC"}
    made = api.post(f"/org/acme/gvc/{unique}/workload", json=body)
    assert made.status_code == 201, made.text
    assert made.json()["gvc"] == unique
    assert api.get(f"/org/acme/gvc/{unique}/workload/web").json()["gvc"] == unique
    for other in ("elsewhere", "//gvc/elsewhere", "/org/acme/gvc/elsewhere"):
        refused = api.post(f"/org/acme/gvc/{unique}/workload", json={**workload("web2", "serverless"), "gvc": other})
        assert refused.status_code == 400, other
        assert [e["path"] for e in refused.json()["details"]["errors"]] == ["gvc"]
