"""The links an identity holds (``references``), each at its JSON path.

- ``aws``, ``gcp``, ``azure`` and ``ngs`` each name a cloud account (``cloudAccountLink``);
- a network resource may name the agent that reaches it (``agentLink``);
- ``memcacheAccess`` and ``spicedbAccess`` entries name a cluster (``clusterLink``).

None of these kinds is served yet, so none need exist: each must be a well-formed link of this
org to the right kind (and not through a GVC: all are org-scoped), and is stored in its full
``/org/...`` form, as the platform returns links.
"""

from __future__ import annotations

from plinth.errors import FieldError
from plinth.kinds.base import Item, Reference
from plinth.kinds.links import link_problem

PROVIDERS = ("aws", "gcp", "azure", "ngs")
CLOUD_ACCOUNT = frozenset({"cloudaccount"})
AGENT = frozenset({"agent"})
#: The list of cluster access entries -> the kind of cluster its links name.
CLUSTER_ACCESS = {"memcacheAccess": frozenset({"memcachecluster"}), "spicedbAccess": frozenset({"spicedbcluster"})}


def identity_references(item: Item, org: str) -> list[Reference]:
    """Every link of the module docstring; none need exist yet."""
    refs = [
        Reference(f"{provider}.cloudAccountLink", item[provider]["cloudAccountLink"], CLOUD_ACCOUNT, must_exist=False)
        for provider in PROVIDERS
        if isinstance(item.get(provider), dict) and "cloudAccountLink" in item[provider]
    ]
    refs += [
        Reference(f"networkResources[{i}].agentLink", resource["agentLink"], AGENT, must_exist=False)
        for i, resource in enumerate(item.get("networkResources") or [])
        if "agentLink" in resource
    ]
    for key, kinds in CLUSTER_ACCESS.items():
        refs += [
            Reference(f"{key}[{i}].clusterLink", entry["clusterLink"], kinds, must_exist=False)
            for i, entry in enumerate(item.get(key) or [])
        ]
    return refs


def link_errors(item: Item, org: str) -> list[FieldError]:
    """What a well-formed link of the right kind may still get wrong (a GVC segment)."""
    errors: list[FieldError] = []
    for ref in identity_references(item, org):
        problem = link_problem(ref.link, org, ref.kinds or ())
        if problem is not None:
            errors.append(FieldError(ref.path, problem))
    return errors
