"""The links a GVC holds, each declared at its JSON path.

Locations must exist (a 400 at the link's path); ``validate_resolved`` also refuses a
disabled one in ``locationLinks``. Secrets, identities and the alias workload need not exist
yet (they may be created after the GVC that uses them), but the engine checks each is a
well-formed link into the GVC's own org and of the right kind.
"""

from __future__ import annotations

from plinth.kinds.base import Item, Reference

LOCATION = frozenset({"location"})
SECRET = frozenset({"secret"})
IDENTITY = frozenset({"identity"})
WORKLOAD = frozenset({"workload"})


def gvc_references(item: Item, org: str) -> list[Reference]:
    """Locations, pull secrets, KEDA secrets and identity, and the alias workload."""
    spec = item.get("spec", {})
    placement = spec.get("staticPlacement", {})
    keda = spec.get("keda", {})
    refs = [
        Reference(f"spec.staticPlacement.locationLinks[{i}]", link, LOCATION)
        for i, link in enumerate(placement.get("locationLinks", []))
    ]
    refs += [
        Reference(
            f"spec.staticPlacement.locationOptions[{i}].locationLink",
            option["locationLink"],
            LOCATION,
        )
        for i, option in enumerate(placement.get("locationOptions", []))
    ]
    refs += [
        Reference(f"spec.pullSecretLinks[{i}]", link, SECRET, must_exist=False)
        for i, link in enumerate(spec.get("pullSecretLinks", []))
    ]
    refs += [
        Reference(f"spec.keda.secrets[{i}]", link, SECRET, must_exist=False)
        for i, link in enumerate(keda.get("secrets", []))
    ]
    if "identityLink" in keda:
        refs.append(Reference("spec.keda.identityLink", keda["identityLink"], IDENTITY, must_exist=False))
    if "aliasWorkloadLink" in spec:
        refs.append(Reference("spec.aliasWorkloadLink", spec["aliasWorkloadLink"], WORKLOAD, must_exist=False))
    return refs
