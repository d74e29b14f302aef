"""A workload's status (docs.controlplane.com/reference/workload/general; types-ts workload.ts), computed by the
server on every write.

From the item, its GVC (``ctx.parent``: id, alias, placement) and what the runtime reports
(``ctx.reported``: ready, replicas, message):

- ``parentId``: the GVC's id;
- ``canonicalEndpoint`` and ``endpoint``: ``https://{workload}-{gvcAlias}.{base domain}``
  (``--base-domain``), for every type but cron (a cron workload serves no requests);
- ``internalName``: ``{workload}.{gvc}.cpln.local``, the mesh-internal name
  (docs.controlplane.com/reference/workload/general);
- ``replicaInternalNames``: for a stateful workload with ``loadBalancer.replicaDirect``, the
  internal name of each replica the autoscaling lower bound starts in each location;
- ``ready``, ``currentReplicaCount``, ``healthCheck``: the runtime's report;
- ``suspendedStatus``: ``suspended`` when every location is suspended,
  ``partiallySuspended`` when some are, else ``notSuspended``;
- ``resolvedImages``: the images as given (no registry is asked for digests);
- ``loadBalancer``: ``[]`` (no direct load balancer is provisioned);
- ``warning`` (only when there is something to say): the secret references that do not hold
  now, a missing secret or a key its type lacks (``secret_refs``), joined by ``; ``.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.base import Item, KindContext
from plinth.kinds.links import gvc_locations
from plinth.kinds.workload.secret_refs import secret_warnings

INTERNAL_DOMAIN = "cpln.local"


def _suspended_at(spec: dict[str, Any], location: str) -> bool:
    suspended = bool((spec.get("defaultOptions") or {}).get("suspend"))
    for local in spec.get("localOptions") or []:
        if str(local.get("location", "")).rsplit("/", 1)[-1] == location and "suspend" in local:
            suspended = bool(local["suspend"])
    return suspended


def suspended_status(spec: dict[str, Any], locations: tuple[str, ...]) -> str:
    if not locations:
        return "suspended" if (spec.get("defaultOptions") or {}).get("suspend") else "notSuspended"
    flags = [_suspended_at(spec, location) for location in locations]
    if all(flags):
        return "suspended"
    return "partiallySuspended" if any(flags) else "notSuspended"


def compute_workload_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    """The whole ``status`` of a workload; pure."""
    spec = item["spec"]
    gvc = ctx.parent or {}
    name, gvc_name = item["name"], item.get("gvc") or ctx.gvc
    reported = ctx.reported or {"ready": False, "replicas": 0, "message": ""}
    locations = gvc_locations(gvc, ctx.placements, ctx.org)
    status: dict[str, Any] = {}
    if "id" in gvc:
        status["parentId"] = gvc["id"]
    if spec.get("type") != "cron" and gvc.get("alias"):
        endpoint = ctx.endpoint_format.format(host=f"{name}-{gvc['alias']}.{ctx.base_domain}")
        status["canonicalEndpoint"] = endpoint
        status["endpoint"] = endpoint
    status["internalName"] = f"{name}.{gvc_name}.{INTERNAL_DOMAIN}"
    if spec.get("type") == "stateful" and (spec.get("loadBalancer") or {}).get("replicaDirect"):
        replicas = int(((spec.get("defaultOptions") or {}).get("autoscaling") or {}).get("minScale", 1))
        status["replicaInternalNames"] = [
            f"replica-{i}.{name}.{location}.{gvc_name}.{INTERNAL_DOMAIN}"
            for location in locations
            for i in range(replicas)
        ]
    status["ready"] = bool(reported["ready"])
    status["currentReplicaCount"] = int(reported["replicas"])
    status["healthCheck"] = {
        "active": bool(reported["ready"]),
        "success": bool(reported["ready"]),
        "message": str(reported.get("message", "")),
        "lastChecked": ctx.now,
    }
    status["suspendedStatus"] = suspended_status(spec, locations)
    status["resolvedImages"] = {
        "resolvedAt": ctx.now,
        "images": [{"manifests": [{"image": c.get("image", "")}]} for c in spec.get("containers") or []],
    }
    status["loadBalancer"] = []
    warnings = secret_warnings(spec, ctx)
    if warnings:
        status["warning"] = "; ".join(warnings)
    return status
