"""Shapes of the vendor's template catalog that Plinth once refused, over real HTTP on both
backends (issue 20, the audit in docs/validation-audit.md).

controlplane-com/templates holds the Helm charts the platform's console installs: documents
the live API accepts from every user who installs them. Two of their shapes broke rules whose
only support was the documentation:

- a standard or stateful workload parked at ``minScale: 0, maxScale: 0`` in ``defaultOptions``
  (metric ``disabled`` or ``cpu``), run in one location by ``localOptions``
  (grafana-multi-location/versions/1.1.1/templates/workload-alerting.yaml,
  manticore/versions/2.1.0/templates/workload.yaml, tidb/versions/1.8.1/templates/workload-pd.yaml);
- a cron workload suspended in ``defaultOptions`` and un-suspended in one location by
  ``localOptions`` (cockroach/versions/1.4.1/templates/workload-backup.yaml,
  postgres-multi-location/versions/1.0.3/templates/workload-logical-backup.yaml).

The documents below are written for this test in those shapes, not copied. Still refused: a
cron workload at ``minScale: 0`` (no accepted document has one).
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.shapes_support import make_gvc, put_twice

PARKED = {"metric": "disabled", "minScale": 0, "maxScale": 0, "maxConcurrency": 0, "scaleToZeroDelay": 300}


def workload(name: str, type_: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "app", "image": "nginx:1.27", "ports": [{"number": 8080, "protocol": "tcp"}]}
    return {"name": name, "spec": {"type": type_, "containers": [container], **spec}}


def test_standard_and_stateful_parked_at_zero_and_run_in_one_location(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    one = {"metric": "disabled", "minScale": 1, "maxScale": 1}
    parked = (("alerting", "standard", "disabled"), ("k6", "standard", "cpu"), ("pd", "stateful", "disabled"))
    for name, type_, metric in parked:
        defaults = {"autoscaling": {**PARKED, "metric": metric, "target": 95}, "capacityAI": False}
        local = [{"location": "//location/aws-us-east-1", "autoscaling": one}]
        stored = put_twice(api, unique, workload(name, type_, defaultOptions=defaults, localOptions=local))
        autoscaling = stored["spec"]["defaultOptions"]["autoscaling"]
        assert (autoscaling["metric"], autoscaling["minScale"], autoscaling["maxScale"]) == (metric, 0, 0), name
        assert stored["spec"]["localOptions"][0]["autoscaling"] == one, name
    # A location may park too, with any metric.
    patch = {"spec": {"localOptions": [{"location": "gcp-us-east1", "autoscaling": {"metric": "cpu", "minScale": 0}}]}}
    patched = api.patch(f"/org/acme/gvc/{unique}/workload/alerting", json=patch)
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"]["localOptions"][0]["autoscaling"]["minScale"] == 0


def test_cron_suspended_by_default_and_run_in_one_location(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    job = {"schedule": "0 3 * * *", "concurrencyPolicy": "Forbid", "restartPolicy": "Never"}
    defaults = {"autoscaling": {"metric": "disabled", "minScale": 1, "maxScale": 1}, "suspend": True}
    local = [{"location": "//location/aws-us-east-1", "suspend": False}]
    stored = put_twice(api, unique, workload("backup", "cron", job=job, defaultOptions=defaults, localOptions=local))
    assert stored["spec"]["localOptions"] == [{"location": "/org/acme/location/aws-us-east-1", "suspend": False}]
    assert stored["spec"]["defaultOptions"]["suspend"] is True
    # Suspended in one location of two.
    assert stored["status"]["suspendedStatus"] == "partiallySuspended"


def test_cron_at_min_scale_zero_is_still_refused(api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    job = {"schedule": "0 3 * * *"}
    body = workload("backup", "cron", job=job, defaultOptions={"autoscaling": {"minScale": 0, "maxScale": 0}})
    refused = api.post(f"/org/acme/gvc/{unique}/workload", json=body)
    assert refused.status_code == 400
    assert [e["path"] for e in refused.json()["details"]["errors"]] == ["spec.defaultOptions.autoscaling.minScale"]
    assert api.get(f"/org/acme/gvc/{unique}/workload/backup").status_code == 404
