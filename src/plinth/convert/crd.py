"""API items -> Kubernetes objects for the official operator's CRDs (operator chart/templates/crd).

``to_crd(item_or_list, org) -> dict``: one object per item (a list gives
``{"kind": "list", "items": [...]}``, the exporter's list form). Decisions where the sources
are silent:

- ``apiVersion: cpln.io/v1``, ``kind`` the platform kind;
- ``metadata.name`` is the platform name when it is a valid Kubernetes name, else a
  sanitised name with the real one in the ``cpln.io/name-replacement`` annotation;
- ``metadata.namespace`` is the org for org-scoped kinds and the gvc for gvc-scoped ones
  (the operator's recommended layout; which kinds are which: the generated ``plinth.kindfacts``);
- the platform fields sit at the top level beside ``metadata`` (``org``, ``gvc``,
  ``description``, ``tags``, ``spec`` and the kind's own top-level fields), as the CRD
  schemas place them; server-owned fields (id, version, created, lastModified, links,
  status, a workload's health, origin, alias) are dropped, as the exporter "strips system
  fields";
- ``tags`` stay at the top level (the schema has them there), values as strings;
- a workload (operator Workload.yaml) lives in its GVC's namespace with ``org`` and ``gvc`` set, and its
  spec is the wire spec unchanged. The operator's schema types a few free-form wire objects as
  strings (``spec.extras.affinity``, ``extras.tolerations[]``, ``extras.topologySpreadConstraints[]``,
  ``sidecar.envoy.http[]``, ``envoy.network[]``); those stay objects here, since the operator passes
  the spec to the API as it is and the API wants objects. Such a workload is exported faithfully
  but is not admitted by that schema;
- a secret is its type and metadata: its values (``data``) are never written, not even when the
  item holds them. The operator's own form of a secret, a core v1 ``Secret`` with base64 data
  (operator pkg/cpln/secret.go), would need them, so the ``secrets.cpln.io`` CRD form is used.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from plinth import kindfacts
from plinth.convert.tfbody import gvc_of
from plinth.kindfacts import GVC_SCOPED

API_VERSION = "cpln.io/v1"
SYSTEM_FIELDS = frozenset(
    {
        "id",
        "version",
        "created",
        "lastModified",
        "links",
        "status",
        "health",
        "origin",
        "alias",
        "kind",
        "name",
        "tags",
        "keys",
    }
)
#: Fields never written, even when the item holds them (a revealed secret): the kinds'
#: ``KindSpec.schema.sealed``, from the generated table.
SEALED = {kind: frozenset(fields) for kind, fields in kindfacts.SEALED.items()}
_K8S_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def kubernetes_name(name: str) -> tuple[str, dict[str, str]]:
    if _K8S_NAME.match(name) and len(name) <= 253:
        return name, {}
    cleaned = re.sub(r"[^a-z0-9.-]+", "-", name.lower()).strip("-.") or "item"
    return cleaned[:253], {"cpln.io/name-replacement": name}


def item_to_crd(item: dict[str, Any], org: str) -> dict[str, Any]:
    kind = str(item.get("kind", ""))
    name, annotations = kubernetes_name(str(item.get("name", "")))
    gvc = gvc_of(item) if kind in GVC_SCOPED else None
    metadata: dict[str, Any] = {"name": name, "namespace": gvc or org}
    if annotations:
        metadata["annotations"] = annotations
    crd: dict[str, Any] = {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "org": org}
    if gvc:
        crd["gvc"] = gvc
    tags = item.get("tags")
    if isinstance(tags, dict):
        crd["tags"] = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in tags.items() if v is not None}
    sealed = SEALED.get(kind, frozenset())
    for key, value in item.items():
        if key not in SYSTEM_FIELDS and key not in sealed and key != "gvc" and value is not None:
            crd[key] = without_nulls(value)
    return crd


def without_nulls(value: Any) -> Any:
    """A copy without ``null`` members: on the wire null means "unset", and the schemas type every field."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return copy.deepcopy(value)


def to_crd(item_or_list: dict[str, Any], org: str) -> dict[str, Any]:
    if item_or_list.get("kind") in ("list", "queryresult"):
        return {"kind": "list", "items": [item_to_crd(item, org) for item in item_or_list.get("items") or []]}
    return item_to_crd(item_or_list, org)
