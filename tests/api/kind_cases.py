"""One case per served kind for the shared conformance suite: where it lives, a valid body,
invalid bodies with the path the 400 must name, and an update. A new kind adds one case here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class KindCase:
    kind: str
    #: The collection path, with ``{org}`` and ``{n}`` (a unique suffix) filled in by the test.
    collection: str
    valid: dict[str, Any]
    #: (body, JSON path the 400 must name)
    invalid: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    update: dict[str, Any] = field(default_factory=dict)
    #: Items the case needs first: (collection, body).
    needs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    name_key: str = "name"


ROUTE = {"prefix": "/", "workloadLink": "//gvc/g{n}/workload/web"}

CASES = [
    KindCase(
        kind="gvc",
        collection="/org/{org}/gvc",
        valid={"name": "g{n}", "spec": {"loadBalancer": {"dedicated": True}}},
        invalid=[
            ({"name": "g{n}", "spec": {"loadBalancer": {"trustedProxies": 3}}}, "spec.loadBalancer.trustedProxies"),
            ({"name": "g{n}", "spec": {"endpointNamingFormat": "weird"}}, "spec.endpointNamingFormat"),
        ],
        update={"spec": {"env": [{"name": "A", "value": "1"}]}},
    ),
    KindCase(
        kind="domain",
        collection="/org/{org}/domain",
        valid={"name": "d{n}.example.com", "spec": {"ports": [{"routes": [ROUTE]}]}},
        invalid=[
            ({"name": "d{n}.example.com", "spec": {"dnsMode": "nope"}}, "spec.dnsMode"),
            ({"name": "d{n}.example.com", "spec": {"ports": [{"number": 70000}]}}, "spec.ports[0].number"),
            ({"name": "d{n}.example.com", "spec": {"gvcLink": "//gvc/does-not-exist"}}, "spec.gvcLink"),
        ],
        update={"spec": {"acceptAllSubdomains": True}},
        needs=[("/org/{org}/gvc", {"name": "g{n}"})],
    ),
    KindCase(
        kind="volumeset",
        collection="/org/{org}/gvc/g{n}/volumeset",
        valid={"name": "v{n}", "spec": {"initialCapacity": 10}},
        invalid=[
            ({"name": "v{n}", "spec": {"initialCapacity": 5}}, "spec.initialCapacity"),
            ({"name": "v{n}", "spec": {}}, "spec.initialCapacity"),
        ],
        update={"spec": {"initialCapacity": 20}},
        needs=[("/org/{org}/gvc", {"name": "g{n}"})],
    ),
    KindCase(
        kind="workload",
        collection="/org/{org}/gvc/g{n}/workload",
        valid={
            "name": "w{n}",
            "spec": {"containers": [{"name": "app", "image": "nginx:latest", "ports": [{"number": 8080}]}]},
        },
        invalid=[
            ({"name": "w{n}", "spec": {"containers": []}}, "spec.containers"),
            ({"name": "w{n}", "spec": {"type": "batch", "containers": [{"name": "app", "image": "x"}]}}, "spec.type"),
        ],
        update={"spec": {"$patch/containers": [{"name": "app", "image": "nginx:1.27"}]}},
        needs=[("/org/{org}/gvc", {"name": "g{n}"})],
    ),
    KindCase(
        kind="serviceaccount",
        collection="/org/{org}/serviceaccount",
        valid={"name": "sa{n}", "description": "a robot"},
        invalid=[({"name": "sa{n}", "description": "x" * 251}, "description"), ({"name": "Sa{n}"}, "name")],
        update={"tags": {"team": "ci"}},
    ),
    KindCase(
        kind="group",
        collection="/org/{org}/group",
        valid={"name": "grp{n}", "memberLinks": ["//serviceaccount/sa{n}"]},
        invalid=[
            ({"name": "grp{n}", "memberLinks": ["//gvc/g{n}"]}, "memberLinks[0]"),
            ({"name": "grp{n}", "memberLinks": ["/org/elsewhere/serviceaccount/sa{n}"]}, "memberLinks[0]"),
        ],
        update={"$append/memberLinks": ["//user/someone{n}@example.com"]},
        needs=[("/org/{org}/serviceaccount", {"name": "sa{n}"})],
    ),
    KindCase(
        kind="policy",
        collection="/org/{org}/policy",
        valid={
            "name": "pol{n}",
            "targetKind": "gvc",
            "target": "all",
            "bindings": [{"permissions": ["view"], "principalLinks": ["//serviceaccount/sa{n}"]}],
        },
        invalid=[
            ({"name": "pol{n}", "targetKind": "spaceship"}, "targetKind"),
            (
                {
                    "name": "pol{n}",
                    "targetKind": "gvc",
                    "bindings": [{"permissions": ["fly"], "principalLinks": ["//serviceaccount/sa{n}"]}],
                },
                "bindings[0].permissions[0]",
            ),
        ],
        update={"bindings": [{"permissions": ["edit"], "principalLinks": ["//serviceaccount/sa{n}"]}]},
        needs=[("/org/{org}/serviceaccount", {"name": "sa{n}"})],
    ),
]


def fill(value: Any, **subs: str) -> Any:
    """Substitute ``{org}`` and ``{n}`` in every string of a nested body."""
    if isinstance(value, str):
        for key, sub in subs.items():
            value = value.replace("{" + key + "}", sub)
        return value
    if isinstance(value, list):
        return [fill(v, **subs) for v in value]
    if isinstance(value, dict):
        return {fill(k, **subs): fill(v, **subs) for k, v in value.items()}
    return value
