"""The third-party Python SDK cpln-py (PyPI, pinned to 1.2.4 in the test extras), unchanged,
against a real Plinth server on both stores: its GVC, image and workload calls.

What the SDK sends, read from its source (``cpln/api/*.py``, ``cpln/models/workloads.py``,
``cpln/templates/*.json``), and what Plinth does with it (docs/api.md):

- ``workloads.create`` POSTs its template with ``"gvc": "$GVC"`` left unreplaced while the path
  names the GVC: a body ``gvc`` that names no GVC is ignored, the path decides;
- ``Workload.suspend()``/``unsuspend()`` PATCH ``{"spec": {"defaultOptions": {"suspend": "true"}}}``
  (a string): stored as the boolean;
- ``Workload.update(cpu=..., memory=...)`` sends ``containers[].resources``, a field no other
  source has (containers carry ``cpu`` and ``memory`` themselves): still a 400 naming it, which
  changes nothing (docs/validation-audit.md);
- ``create_gvc`` is not implemented by the SDK (it raises), and Plinth serves no image push, so
  the GVC is made through the API and the image calls see an empty registry.

The SDK's ``get_spec`` (used by ``update(image=...)`` and ``export``) refuses keys its own
dataclasses lack, among them ``spot``, which its own template sends; so the image update runs on
a workload created without the template.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cpln  # type: ignore[import-untyped]
import httpx
import pytest
from cpln.config import WorkloadConfig  # type: ignore[import-untyped]
from cpln.errors import APIError, NotFound  # type: ignore[import-untyped]
from cpln.utils import get_default_workload_template  # type: ignore[import-untyped]

from tests.support.server import ServerProcess, serving

ORG = "acme"
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server per store (this module needs no node: it overrides the CLI's ``server``)."""
    with serving(request.param, tmp_path_factory.mktemp("plinth-cpln-py")) as process:
        yield process


@pytest.fixture
def sdk(server: ServerProcess) -> Any:
    return cpln.CPLNClient(base_url=server.url, org=ORG, token=server.key)


def make_gvc(api: httpx.Client, name: str) -> dict[str, Any]:
    body = {"name": name, "spec": {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1"]}}}
    made = api.post(f"/org/{ORG}/gvc", json=body)
    assert made.status_code == 201, made.text
    return made.json()  # type: ignore[no-any-return]


def test_the_pinned_sdk_sends_the_placeholder_and_the_string() -> None:
    """Guards the premise: if a new pin stops sending these, the tests below test less."""
    assert get_default_workload_template("serverless")["gvc"] == "$GVC"
    assert get_default_workload_template("standard")["gvc"] == "$GVC"


def test_gvcs_list_get_and_delete(sdk: Any, api: httpx.Client, unique: str) -> None:
    made = make_gvc(api, unique)
    listed = {gvc.attrs["name"]: gvc.attrs["id"] for gvc in sdk.gvcs.list()}
    assert listed[unique] == made["id"]
    got = sdk.gvcs.get(unique)
    assert got.attrs == api.get(f"/org/{ORG}/gvc/{unique}").json()
    assert got.get()["id"] == made["id"]
    with pytest.raises(ValueError, match="Not implemented"):
        sdk.api.create_gvc(unique + "x")  # the SDK's own limit, not the server's
    got.delete()
    assert api.get(f"/org/{ORG}/gvc/{unique}").status_code == 404
    with pytest.raises(NotFound):
        sdk.gvcs.get(unique)


def test_images_list_get_and_delete_see_an_empty_registry(sdk: Any) -> None:
    assert sdk.images.list() == []
    with pytest.raises(NotFound):
        sdk.images.get("web:1")
    with pytest.raises(NotFound):
        sdk.api.delete_image("web:1")


def test_workloads_create_list_get_patch_and_delete(sdk: Any, api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    base = f"/org/{ORG}/gvc/{unique}/workload"
    sdk.workloads.create(name="web", gvc=unique, image="nginx:1.27", container_name="app")
    sdk.workloads.create(name="std", gvc=unique, image="nginx:1.27", container_name="app", workload_type="standard")
    for name, type_ in (("web", "serverless"), ("std", "standard")):
        stored = api.get(f"{base}/{name}").json()
        assert (stored["gvc"], stored["spec"]["type"]) == (unique, type_)
        assert stored["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert sorted(w.attrs["name"] for w in sdk.workloads.list(gvc=unique)) == ["std", "web"]

    web = sdk.workloads.get(WorkloadConfig(gvc=unique, workload_id="web"))
    assert web.attrs == api.get(f"{base}/web").json()

    web.suspend()
    stored = api.get(f"{base}/web").json()
    assert stored["spec"]["defaultOptions"]["suspend"] is True
    assert stored["status"]["suspendedStatus"] == "suspended"
    web.unsuspend()
    stored = api.get(f"{base}/web").json()
    assert stored["spec"]["defaultOptions"]["suspend"] is False
    assert stored["status"]["suspendedStatus"] == "notSuspended"

    web.update(description="the front end")
    web.update(replicas=2)
    stored = api.get(f"{base}/web").json()
    assert stored["description"] == "the front end"
    autoscaling = stored["spec"]["defaultOptions"]["autoscaling"]
    assert (autoscaling["minScale"], autoscaling["maxScale"]) == (2, 2)

    for name in ("web", "std"):
        sdk.workloads.get(WorkloadConfig(gvc=unique, workload_id=name)).delete()
        assert api.get(f"{base}/{name}").status_code == 404
    assert sdk.workloads.list(gvc=unique) == []


def test_workload_image_update_and_the_resources_field(sdk: Any, api: httpx.Client, unique: str) -> None:
    make_gvc(api, unique)
    href = f"/org/{ORG}/gvc/{unique}/workload/api"
    container = {"name": "app", "image": "nginx:1.27", "ports": [{"number": 8080, "protocol": "http"}]}
    made = api.post(f"/org/{ORG}/gvc/{unique}/workload", json={"name": "api", "spec": {"containers": [container]}})
    assert made.status_code == 201, made.text
    workload = sdk.workloads.get(WorkloadConfig(gvc=unique, workload_id="api"))
    workload.update(image="nginx:1.28", container_name="app")
    assert api.get(href).json()["spec"]["containers"][0]["image"] == "nginx:1.28"

    before = api.get(href).json()
    with pytest.raises(APIError, match=r"spec\.containers\[0\]\.resources"):
        workload.update(cpu="100m", memory="256Mi")
    assert api.get(href).json()["version"] == before["version"]  # the 400 changed nothing
