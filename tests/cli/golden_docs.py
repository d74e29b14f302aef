"""Response bodies for the formatting goldens: one per table model, plus the awkward shapes.

Key order is deliberately not sorted, tags hold every JSON type, descriptions run past the
40-character cut, and some cells span several lines, so that the goldens pin the details.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

ORG = "acme"
LONG = "Public API ingress for mobile and web clients, with a very long description"


def links(self_href: str, **extra: str) -> list[dict[str, str]]:
    found = [{"rel": "self", "href": self_href}]
    found += [{"rel": rel, "href": href} for rel, href in extra.items()]
    return found


def domain(name: str, description: str, tags: dict[str, Any], created: str = "2025-02-14T00:00:00.000Z") -> dict:
    return {
        "id": f"00000000-0000-4000-8000-{zlib.crc32(name.encode()) % 10**12:012d}",
        "name": name,
        "kind": "domain",
        "version": 3,
        "description": description,
        "tags": tags,
        "created": created,
        "lastModified": "2025-02-15T08:30:00.000Z",
        "links": links(f"/org/{ORG}/domain/{name}", org=f"/org/{ORG}"),
        "spec": {
            "dnsMode": "cname",
            "ports": [
                {
                    "number": 443,
                    "protocol": "http2",
                    "routes": [{"prefix": "/", "workloadLink": f"/org/{ORG}/gvc/prod/workload/api"}],
                }
            ],
            "acceptAllHosts": False,
        },
        "status": {"status": "ready", "endpoints": [{"url": f"https://{name}", "workloadLink": ""}]},
    }


DOMAIN = domain(
    "api.example.com",
    LONG,
    {
        "team": "platform",
        "tier": 1,
        "public": True,
        "owner": None,
        "nested": {"a": [1, 2]},
        "cpln/managed": "true",
        "cpln/deployTimestamp": "2025-02-14T00:00:00.000Z",
        "long": "x" * 90,
    },
)
DOMAIN_2 = domain("example.com", "Primary marketing site", {"team": "web", "tier": 1, "cpln/managed": "true"})
DOMAIN_3 = domain("empty.example.com", "", {})


def listing(item_kind: str, items: list[dict], next_href: str | None = None, kind: str = "list") -> dict:
    page_links = links(f"/org/{ORG}/{item_kind}")
    if next_href:
        page_links.append({"rel": "next", "href": next_href})
    return {"kind": kind, "itemKind": item_kind, "items": items, "links": page_links}


ORG_ITEM = {
    "id": "9f0c1f8e-0000-4000-8000-000000000001",
    "name": ORG,
    "kind": "org",
    "version": 7,
    "description": "Acme Corporation",
    "tags": {"billing": "enterprise"},
    "created": "2024-05-20T10:11:12.000Z",
    "lastModified": "2025-01-01T00:00:00.000Z",
    "links": links(f"/org/{ORG}"),
    "spec": {"sessionTimeoutSeconds": 900, "authConfig": {"domainAutoMembers": [], "samlOnly": False}},
    "status": {"active": True, "endpointPrefix": "acme-x1y2"},
}


def gvc(name: str, created: str, locations: list[str], query: bool = False, description: str = "") -> dict:
    placement: dict[str, Any] = {"locationLinks": [f"/org/{ORG}/location/{loc}" for loc in locations]}
    if query:
        placement["locationQuery"] = {"kind": "location", "spec": {"match": "all", "terms": []}}
    return {
        "id": f"0000-{name}",
        "name": name,
        "kind": "gvc",
        "version": 1,
        "description": description or name,
        "tags": {"env": name},
        "alias": f"{name}-a1b2c3",
        "created": created,
        "lastModified": created,
        "links": links(f"/org/{ORG}/gvc/{name}"),
        "spec": {"staticPlacement": placement, "domain": f"{name}.example.com" if name == "prod" else None},
        "status": {},
    }


GVC_PROD = gvc(
    "prod",
    "2024-05-20T10:11:12.000Z",
    ["aws-us-west-2", "gcp-us-east1"],
    query=True,
    description="Production workloads in two clouds, across regions",
)
GVC_DEV = gvc("dev", "2025-02-14T23:59:59.999Z", [])

VOLUMESET = {
    "id": "vs-1",
    "name": "data",
    "kind": "volumeset",
    "version": 2,
    "description": "Database volumes",
    "tags": {},
    "gvc": "prod",
    "created": "2024-12-31T23:00:00.000Z",
    "lastModified": "2025-01-01T00:00:00.000Z",
    "links": links(f"/org/{ORG}/gvc/prod/volumeset/data", gvc=f"/org/{ORG}/gvc/prod"),
    "spec": {
        "initialCapacity": 10,
        "performanceClass": "general-purpose-ssd",
        "fileSystemType": "ext4",
        "snapshots": {"createFinalSnapshot": True, "retentionDuration": "7d"},
    },
    "status": {"parentId": "0000-prod", "workloadLinks": []},
}

USERS = listing(
    "user",
    [
        {
            "id": "u-1",
            "name": "Ada Lovelace",
            "kind": "user",
            "email": "ada@example.com",
            "idp": "google",
            "created": "2024-05-20T10:11:12.000Z",
            "tags": {},
            "links": links(f"/org/{ORG}/user/ada@example.com"),
        },
        {
            "id": "u-2",
            "name": "Grace Hopper",
            "kind": "user",
            "email": "grace@example.com",
            "idp": "saml",
            "created": "2025-01-02T03:04:05.006Z",
            "tags": {"admin": True},
            "links": links(f"/org/{ORG}/user/grace@example.com"),
        },
    ],
)

SERVICEACCOUNT = {
    "id": "sa-1",
    "name": "ci",
    "kind": "serviceaccount",
    "version": 4,
    "description": "Continuous integration",
    "tags": {"team": "platform"},
    "origin": "default",
    "created": "2025-01-10T12:00:00.000Z",
    "keys": [
        {"name": "sAbCdEfGhIjKlMnO", "created": "2025-01-10T12:00:00.000Z", "description": "github"},
        {"name": "sZyXwVuTsRqPoNmL", "created": "2025-01-11T12:00:00.000Z", "description": "gitlab"},
    ],
    "links": links(f"/org/{ORG}/serviceaccount/ci"),
}

POLICIES = listing(
    "policy",
    [
        {
            "id": "p-1",
            "name": "superusers-domain",
            "kind": "policy",
            "description": "Superusers can manage domains",
            "origin": "builtin",
            "targetKind": "domain",
            "target": "all",
            "targetLinks": [],
            "created": "2024-05-20T10:11:12.000Z",
            "bindings": [],
            "tags": {},
            "links": links(f"/org/{ORG}/policy/s"),
        },
        {
            "id": "p-2",
            "name": "deployers",
            "kind": "policy",
            "description": "Deployers may edit the production gvc",
            "origin": "default",
            "targetKind": "gvc",
            "targetLinks": [f"/org/{ORG}/gvc/prod"],
            "targetQuery": {"spec": {"match": "all", "terms": [{"op": "=", "tag": "env", "value": "prod"}]}},
            "created": "2025-01-02T03:04:05.006Z",
            "bindings": [{"permissions": ["edit"], "principalLinks": ["//group/x"]}],
            "tags": {},
            "links": links(f"/org/{ORG}/policy/deployers"),
        },
        {
            "id": "p-3",
            "name": "readers",
            "kind": "policy",
            "origin": "default",
            "targetKind": "secret",
            "created": "2025-01-02T03:04:05.006Z",
            "tags": {},
            "links": links(f"/org/{ORG}/policy/readers"),
        },
    ],
)

GROUPS = listing(
    "group",
    [
        {
            "id": "g-1",
            "name": "superusers",
            "kind": "group",
            "description": "Built-in superusers",
            "origin": "builtin",
            "memberLinks": [f"/org/{ORG}/user/u-1"],
            "created": "2024-05-20T10:11:12.000Z",
            "tags": {},
            "links": links(f"/org/{ORG}/group/superusers"),
        },
        {
            "id": "g-2",
            "name": "engineers",
            "kind": "group",
            "description": "Everyone in engineering",
            "origin": "default",
            "memberLinks": [],
            "memberQuery": {"kind": "user", "spec": {"terms": []}},
            "created": "2025-01-02T03:04:05.006Z",
            "tags": {"dept": "eng"},
            "links": links(f"/org/{ORG}/group/engineers"),
        },
        {
            "id": "g-3",
            "name": "nobody",
            "kind": "group",
            "origin": "default",
            "created": "2025-01-02T03:04:05.006Z",
            "links": links(f"/org/{ORG}/group/nobody"),
        },
    ],
)

SECRETS = listing(
    "secret",
    [
        {
            "id": "s-1",
            "name": "tls-cert",
            "kind": "secret",
            "description": "Wildcard certificate\nfor example.com",
            "type": "tls",
            "created": "2025-01-02T03:04:05.006Z",
            "tags": {},
            "links": links(f"/org/{ORG}/secret/tls-cert"),
        },
        {
            "id": "s-2",
            "name": "db-password",
            "kind": "secret",
            "type": "opaque",
            "created": "not a date",
            "tags": {"rotated": "2025-01-01"},
            "links": links(f"/org/{ORG}/secret/db-password"),
        },
    ],
)

UNKNOWN_KIND = {"name": "zed", "kind": "gadget", "id": "x", "1": "first", "b": {"z": 1, "a": 2}, "version": 1.0}
BARE_ARRAY = [{"name": "one", "kind": "domain"}, {"name": "two", "kind": "domain"}]
NO_NAME_LIST = listing("domain", [{"kind": "domain", "description": "has no name"}])

NOT_FOUND = {
    "status": 404,
    "message": "Domain 'nope.example.com' not found",
    "code": "not_found",
    "details": {"kind": "domain", "name": "nope.example.com"},
    "id": "e7a1c3f0-4b2d-4c5e-9f60-000000000404",
}
INVALID = {
    "status": 400,
    "message": "Invalid domain: spec.ports[0].number: must be between 80 and 65535",
    "code": "invalid",
    "details": {
        "kind": "domain",
        "name": "x.example.com",
        "errors": [{"path": "spec.ports[0].number", "message": "must be between 80 and 65535"}],
    },
    "id": "11111111-2222-4333-8444-555555555555",
}

HCL = 'resource "cpln_domain" "api_example_com" {\n  name        = "api.example.com"\n}\n'
CRD_DOMAIN = {
    "apiVersion": "cpln.io/v1",
    "kind": "domain",
    "metadata": {"name": "api.example.com", "namespace": "acme"},
    "org": ORG,
    "description": "Public API",
    "tags": {"team": "platform"},
    "spec": {"dnsMode": "cname", "ports": [{"number": 443, "protocol": "http2"}]},
}
DISCOVERY = {
    "endpoints": {
        "terraform-exporter": "http://127.0.0.1:{{port}}/tfexp",
        "k8s-crd-exporter": "http://127.0.0.1:{{port}}/crdexp",
    },
    "firebase": {"apiKey": "none", "authDomain": "none", "projectId": "none"},
}


def dumps(doc: Any) -> str:
    return json.dumps(doc, indent=None, separators=(",", ":"), ensure_ascii=False)
