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
    identities = [f"id-{n}" for n in range(IDENTITIES)]
    secrets = ["db", "tls", *[f"key-{n}" for n in range(SECRETS - 2)]]
    volumes = [f"vol-{n}" for n in range(VOLUMES)]
    docs: list[dict[str, Any]] = [
        {"kind": "gvc", "name": gvc, "spec": {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1"]}}}
    ]
    for name in secrets:
        docs.append({"kind": "secret", "name": name, "type": "opaque", "data": {"payload": name, "encoding": "plain"}})
    docs += [{"kind": "identity", "name": name, "gvc": gvc, "description": "runs workloads"} for name in identities]
    volume_spec = {"initialCapacity": 10, "fileSystemType": "shared", "performanceClass": "shared"}
    docs += [{"kind": "volumeset", "name": name, "gvc": gvc, "spec": volume_spec} for name in volumes]
    for n in range(WORKLOADS):
        spec = realistic_spec(volumes[n % VOLUMES])
        spec["identityLink"] = f"//gvc/{gvc}/identity/{identities[n % IDENTITIES]}"
        docs.append({"kind": "workload", "name": f"app-{n}", "gvc": gvc, "spec": spec})
    for n in range(DOMAINS):
        route = {"prefix": "/", "workloadLink": f"//gvc/{gvc}/workload/app-{n}"}
        docs.append({"kind": "domain", "name": f"app{n}.example.com", "spec": {"ports": [{"routes": [route]}]}})
    for n in range(POLICIES):
        binding = {"permissions": ["reveal"], "principalLinks": [f"//gvc/{gvc}/identity/{identities[n % IDENTITIES]}"]}
        target = [f"//secret/{secrets[n % SECRETS]}"]
        docs.append({"kind": "policy", "name": f"reveal-{n}", "targetKind": "secret", "targetLinks": target})
        docs[-1]["bindings"] = [binding]
    assert len(docs) == 1000
    return docs
