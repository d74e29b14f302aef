"""The 1,000-document stack ``bench.writes`` applies: what a large team keeps in files.

One GVC, 150 secrets, 49 identities, 200 volume sets, 300 workloads (``bench.workload_spec``'s
realistic spec, each with its identity, the ``db`` and ``tls`` secrets and a volume set), 200
domains routing to workloads and 100 policies granting identities ``reveal`` on secrets.
Written kind by kind; the CLIs find their own order from the links.
"""

from __future__ import annotations

from typing import Any

from bench.workload_spec import realistic_spec

GVC = "shop"
SECRETS, IDENTITIES, VOLUMES, WORKLOADS, DOMAINS, POLICIES = 150, 49, 200, 300, 200, 100


def large_stack(gvc: str = GVC) -> list[dict[str, Any]]:
    """The 1,000 documents (see the module docstring)."""
    docs = stack_documents(gvc, SECRETS, IDENTITIES, VOLUMES, WORKLOADS, DOMAINS, POLICIES)
    assert len(docs) == 1000
    return docs


def stack_documents(
    gvc: str, secrets: int, identities: int, volumes: int, workloads: int, domains: int, policies: int
) -> list[dict[str, Any]]:
    """A stack of this shape with these counts (``bench.apply``'s is a 50-document one)."""
    identity_names = [f"id-{n}" for n in range(identities)]
    secret_names = ["db", "tls", *[f"key-{n}" for n in range(secrets - 2)]]
    volume_names = [f"vol-{n}" for n in range(volumes)]
    docs: list[dict[str, Any]] = [
        {"kind": "gvc", "name": gvc, "spec": {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1"]}}}
    ]
    for name in secret_names:
        docs.append({"kind": "secret", "name": name, "type": "opaque", "data": {"payload": name, "encoding": "plain"}})
    docs += [{"kind": "identity", "name": name, "gvc": gvc, "description": "runs workloads"} for name in identity_names]
    volume_spec = {"initialCapacity": 10, "fileSystemType": "shared", "performanceClass": "shared"}
    docs += [{"kind": "volumeset", "name": name, "gvc": gvc, "spec": volume_spec} for name in volume_names]
    for n in range(workloads):
        spec = realistic_spec(volume_names[n % volumes])
        spec["identityLink"] = f"//gvc/{gvc}/identity/{identity_names[n % identities]}"
        docs.append({"kind": "workload", "name": f"app-{n}", "gvc": gvc, "spec": spec})
    for n in range(domains):
        route = {"prefix": "/", "workloadLink": f"//gvc/{gvc}/workload/app-{n % workloads}"}
        docs.append({"kind": "domain", "name": f"app{n}.example.com", "spec": {"ports": [{"routes": [route]}]}})
    for n in range(policies):
        principal = f"//gvc/{gvc}/identity/{identity_names[n % identities]}"
        target = [f"//secret/{secret_names[n % secrets]}"]
        docs.append({"kind": "policy", "name": f"reveal-{n}", "targetKind": "secret", "targetLinks": target})
        docs[-1]["bindings"] = [{"permissions": ["reveal"], "principalLinks": [principal]}]
    return docs
