"""The links a workload holds (``references``), and the rules on what they resolve to.

Where links sit and how they are stored (types-ts workload.ts):

- ``spec.identityLink``: an identity of the workload's own GVC, which must exist.
  ``//identity/NAME`` (what the official CLI sends) and ``//gvc/G/identity/NAME`` are accepted
  and stored in the full form ``/org/{org}/gvc/{gvc}/identity/NAME``. ``cpln apply`` writes
  identities before workloads, so a stack holding both applies; the workload protects its
  identity from deletion (``protects``).
- volumes ``cpln://volumeset/NAME``: a volume set of the same GVC, which must exist (its file
  system decides who may mount it); ``cpln://secret/NAME[.KEY]`` in a volume or an env value
  names a secret of the org, which need not exist yet (secrets are read at run time; what does
  not hold is said in the status, ``secret_refs``). Both URIs are stored as sent: the URI is
  the field's own form.
- ``spec.localOptions[].location`` (a name or a link) and ``loadBalancer.direct.ipSet`` (a
  name or a link) are stored as full links; neither need exist: locations are not served yet,
  and ``cpln apply`` writes IP sets after workloads (an IP set's status says whether the
  workload it links to names it back).
"""

from __future__ import annotations

from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext, Reference
from plinth.kinds.workload.secret_refs import SECRET_URI, secret_href
from plinth.meta import parse_link

VOLUMESET_URI = "cpln://volumeset/"
#: Volume set file systems only a stateful workload may mount (docs.controlplane.com/reference/workload/types,
#: .../volumes).
PER_REPLICA_FILE_SYSTEMS = frozenset({"ext4", "xfs"})


def _named(value: str, org: str, kind: str, gvc: str | None = None) -> str:
    """A bare name as a full link of ``kind``; a link (either form) as it is."""
    if value.startswith("/"):
        return value
    inside = f"/gvc/{gvc}" if gvc else ""
    return f"/org/{org}{inside}/{kind}/{value}"


def _identity_link(value: str, org: str, gvc: str) -> str:
    parsed = parse_link(value, org)
    if parsed is not None and parsed.kind == "identity" and parsed.gvc is None:
        return f"/org/{parsed.org}/gvc/{gvc}/identity/{parsed.name}"
    return value


def _uri_references(container: dict[str, Any], where: str, org: str, gvc: str) -> list[Reference]:
    refs: list[Reference] = []
    for j, volume in enumerate(container.get("volumes") or []):
        uri = str(volume.get("uri", ""))
        path = f"{where}.volumes[{j}].uri"
        if uri.startswith(VOLUMESET_URI):
            name = uri.removeprefix(VOLUMESET_URI)
            link = f"/org/{org}/gvc/{gvc}/volumeset/{name}"
            refs.append(Reference(path, link, frozenset({"volumeset"}), must_exist=True, rewrite=False))
        elif uri.startswith(SECRET_URI):
            refs.append(_secret(path, uri, org))
    for j, env in enumerate(container.get("env") or []):
        value = env.get("value")
        if isinstance(value, str) and value.startswith(SECRET_URI):
            refs.append(_secret(f"{where}.env[{j}].value", value, org))
    return refs


def _secret(path: str, uri: str, org: str) -> Reference:
    return Reference(path, secret_href(uri, org), frozenset({"secret"}), must_exist=False, rewrite=False)


def workload_references(item: Item, org: str) -> list[Reference]:
    """Every link in a workload's spec, each at its JSON path."""
    spec = item.get("spec") or {}
    gvc = str(item.get("gvc") or "")
    refs: list[Reference] = []
    if isinstance(spec.get("identityLink"), str):
        link = _identity_link(spec["identityLink"], org, gvc)
        refs.append(Reference("spec.identityLink", link, frozenset({"identity"}), must_exist=True))
    for i, container in enumerate(spec.get("containers") or []):
        refs += _uri_references(container, f"spec.containers[{i}]", org, gvc)
    for i, local in enumerate(spec.get("localOptions") or []):
        if isinstance(local.get("location"), str):
            link = _named(local["location"], org, "location")
            refs.append(Reference(f"spec.localOptions[{i}].location", link, frozenset({"location"}), must_exist=False))
    direct = (spec.get("loadBalancer") or {}).get("direct") or {}
    if isinstance(direct.get("ipSet"), str):
        link = _named(direct["ipSet"], org, "ipset")
        refs.append(Reference("spec.loadBalancer.direct.ipSet", link, frozenset({"ipset"}), must_exist=False))
    return refs


def identity_link_errors(item: Item, ctx: KindContext) -> list[FieldError]:
    """The identity must be one of the workload's own GVC (a rule on the link's shape, so it
    runs with the other rules, before any link is resolved)."""
    link = item["spec"].get("identityLink")
    identity = parse_link(_identity_link(link, ctx.org, ctx.gvc or ""), ctx.org) if isinstance(link, str) else None
    if identity is not None and identity.kind == "identity" and identity.gvc != ctx.gvc:
        return [FieldError("spec.identityLink", f"must name an identity of this workload's GVC '{ctx.gvc}'")]
    return []


def validate_workload_links(item: Item, ctx: KindContext) -> list[FieldError]:
    """Rules on what the links resolve to: only a stateful workload mounts an ext4 or xfs
    volume set (one volume per replica)."""
    errors: list[FieldError] = []
    spec = item["spec"]
    for ref in workload_references(item, ctx.org):
        target = ctx.lookup(ref.link) if ref.kinds == frozenset({"volumeset"}) else None
        if target is None:
            continue
        file_system = (target.get("spec") or {}).get("fileSystemType")
        if file_system in PER_REPLICA_FILE_SYSTEMS and spec.get("type") != "stateful":
            errors.append(
                FieldError(
                    ref.path,
                    f"volume set '{target['name']}' uses {file_system}, which only stateful workloads may mount "
                    "(use a shared volume set, or make the workload stateful)",
                )
            )
    return errors
