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


def listing(
    item_kind: str, items: list[dict], next_href: str | None = None, kind: str = "list", self_href: str | None = None
) -> dict:
    page_links = links(self_href or f"/org/{ORG}/{item_kind}")
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


def workload_links(name: str, gvc: str = "prod") -> list[dict[str, str]]:
    base = f"/org/{ORG}/gvc/{gvc}/workload/{name}"
    return links(base, org=f"/org/{ORG}", gvc=f"/org/{ORG}/gvc/{gvc}", deployment=f"{base}/deployment")


def workload(
    name: str,
    description: str,
    tags: dict[str, Any],
    spec: dict[str, Any],
    status: dict[str, Any],
    gvc: str = "prod",
    created: str = "2025-02-10T08:00:00.000Z",
    version: int = 1,
) -> dict:
    """A workload as the server returns it (types-ts workload.ts): the envelope, ``gvc``, spec, status."""
    return {
        "id": f"00000000-0000-4000-9000-{zlib.crc32(name.encode()) % 10**12:012d}",
        "name": name,
        "kind": "workload",
        "version": version,
        "description": description,
        "tags": tags,
        "gvc": gvc,
        "created": created,
        "lastModified": "2025-02-20T09:00:00.000Z",
        "links": workload_links(name, gvc),
        "spec": spec,
        "status": status,
    }


def probe(check: dict[str, Any], initial_delay: int) -> dict[str, Any]:
    return {
        **check,
        "initialDelaySeconds": initial_delay,
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


WORKLOAD = workload(
    "web",
    "Storefront web tier: proxy, app server and log shipper",
    {"team": "web", "tier": 1, "public": True, "cpln/deployTimestamp": "2025-02-20T08:59:00.000Z"},
    {
        "type": "standard",
        "identityLink": f"/org/{ORG}/gvc/prod/identity/storefront",
        "containers": [
            {
                "name": "proxy",
                "image": "nginx:1.27-alpine",
                "cpu": "100m",
                "memory": "128Mi",
                "ports": [{"protocol": "http", "number": 8080}],
                "env": [
                    {"name": "UPSTREAM", "value": "http://localhost:3000"},
                    {"name": "LOG_LEVEL", "value": "info"},
                ],
                "inheritEnv": False,
                "readinessProbe": probe(
                    {
                        "httpGet": {
                            "path": "/healthz",
                            "port": 8080,
                            "httpHeaders": [{"name": "X-Probe", "value": "readiness"}],
                            "scheme": "HTTP",
                        }
                    },
                    5,
                ),
                "livenessProbe": probe({"tcpSocket": {"port": 8080}}, 60),
                "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 20"]}}},
                "volumes": [{"uri": "cpln://secret/tls-cert", "path": "/etc/nginx/tls", "recoveryPolicy": "retain"}],
            },
            {
                "name": "app",
                "image": f"/org/{ORG}/image/storefront:2.4.1",
                "workingDir": "/srv/app",
                "command": "node",
                "args": ["server.js", "--port", "3000"],
                "cpu": "500m",
                "memory": "1Gi",
                "minCpu": "250m",
                "minMemory": "512Mi",
                "ports": [{"protocol": "http2", "number": 3000}, {"protocol": "grpc", "number": 50051}],
                "env": [
                    {"name": "NODE_ENV", "value": "production"},
                    {"name": "DATABASE_URL", "value": "cpln://secret/db-password"},
                    {"name": "POD_IP", "value": "cpln://reference/status.podIP"},
                    {"name": "FEATURE_FLAGS"},
                ],
                "inheritEnv": True,
                "readinessProbe": probe({"grpc": {"port": 50051}}, 10),
                "livenessProbe": probe({"exec": {"command": ["/bin/healthcheck", "--live"]}}, 60),
                "metrics": {"port": 9464, "path": "/metrics", "dropMetrics": ["^go_.*", "^process_.*"]},
                "volumes": [
                    {"uri": "cpln://volumeset/data", "path": "/var/lib/app", "recoveryPolicy": "retain"},
                    {"uri": "scratch://cache", "path": "/cache", "recoveryPolicy": "retain"},
                ],
            },
            {
                "name": "shipper",
                "image": "fluent/fluent-bit:3.1",
                "cpu": "50m",
                "memory": "64Mi",
                "ports": [{"protocol": "tcp", "number": 24224}],
                "env": [{"name": "FLUENT_OUTPUT", "value": "s3://acme-logs/web"}],
                "inheritEnv": False,
                "volumes": [{"uri": "scratch://cache", "path": "/cache", "recoveryPolicy": "retain"}],
            },
        ],
        "firewallConfig": {
            "external": {
                "inboundAllowCIDR": ["0.0.0.0/0"],
                "inboundBlockedCIDR": ["203.0.113.0/24"],
                "outboundAllowHostname": ["*.stripe.com", "api.github.com"],
                "outboundAllowCIDR": [],
                "outboundBlockedCIDR": [],
                "outboundAllowPort": [{"protocol": "https", "number": 443}],
                "http": {"inboundHeaderFilter": [{"key": "x-tenant", "allowedValues": ["^acme-[a-z]+$"]}]},
            },
            "internal": {
                "inboundAllowType": "workload-list",
                "inboundAllowWorkload": [f"/org/{ORG}/gvc/prod/workload/api"],
            },
        },
        "defaultOptions": {
            "autoscaling": {
                "metric": "cpu",
                "target": 70,
                "minScale": 2,
                "maxScale": 10,
                "scaleToZeroDelay": 300,
                "maxConcurrency": 0,
            },
            "capacityAI": False,
            "timeoutSeconds": 15,
            "debug": False,
            "suspend": False,
            "multiZone": {"enabled": True},
        },
        "localOptions": [
            {
                "location": f"/org/{ORG}/location/gcp-us-east1",
                "autoscaling": {"metric": "cpu", "target": 60, "minScale": 1, "maxScale": 4},
                "capacityAI": False,
                "timeoutSeconds": 15,
                "suspend": False,
            }
        ],
        "rolloutOptions": {
            "minReadySeconds": 10,
            "maxUnavailableReplicas": "1",
            "maxSurgeReplicas": "25%",
            "scalingPolicy": "OrderedReady",
            "terminationGracePeriodSeconds": 90,
        },
        "securityOptions": {"filesystemGroupId": 1001, "runAsUser": 1001},
        "loadBalancer": {
            "direct": {
                "enabled": True,
                "ports": [{"externalPort": 8443, "protocol": "TCP", "scheme": "https", "containerPort": 8080}],
                "ipSet": f"/org/{ORG}/ipset/edge",
            },
            "geoLocation": {"enabled": True, "headers": {"country": "x-geo-country", "city": "x-geo-city"}},
            "replicaDirect": False,
        },
        "requestRetryPolicy": {"attempts": 3, "retryOn": ["connect-failure", "refused-stream", "5xx"]},
        "supportDynamicTags": True,
    },
    {
        "parentId": "0000-prod",
        "canonicalEndpoint": "https://web-prod-a1b2c3.cpln.app",
        "endpoint": "https://web-prod-a1b2c3.cpln.app",
        "internalName": "web.prod.cpln.local",
        "currentReplicaCount": 4,
        "healthCheck": {
            "active": True,
            "success": True,
            "code": 200,
            "message": "OK",
            "failures": 0,
            "successes": 1440,
            "lastChecked": "2025-02-20T09:30:00.000Z",
        },
        "loadBalancer": [{"origin": "aws-us-west-2", "url": "https://web-prod-a1b2c3.aws-us-west-2.controlplane.us"}],
    },
    version=12,
)
# Read-only, server-computed (types-ts workload.ts); the TF client and the operator's CRD both know it.
WORKLOAD["health"] = {
    "readiness": "Healthy",
    "syncFailed": False,
    "readyLocations": 2,
    "totalLocations": 2,
    "readyReplicas": 4,
    "totalReplicas": 4,
}

WORKLOAD_CRON = workload(
    "nightly-report",
    "Nightly sales report",
    {"team": "finance"},
    {
        "type": "cron",
        "identityLink": f"/org/{ORG}/gvc/prod/identity/reporter",
        "containers": [
            {
                "name": "report",
                "image": "//image/report:1.8",
                "cpu": "250m",
                "memory": "256Mi",
                "command": "python",
                "args": ["-m", "report", "--since=24h"],
                "env": [{"name": "S3_BUCKET", "value": "acme-reports"}],
                "inheritEnv": False,
                "volumes": [{"uri": "s3://acme-reports", "path": "/reports", "recoveryPolicy": "retain"}],
            }
        ],
        "job": {
            "schedule": "0 3 * * *",
            "concurrencyPolicy": "Forbid",
            "historyLimit": 5,
            "restartPolicy": "OnFailure",
            "activeDeadlineSeconds": 3600,
        },
        "firewallConfig": {
            "external": {"inboundAllowCIDR": [], "outboundAllowCIDR": ["0.0.0.0/0"], "outboundAllowHostname": []},
            "internal": {"inboundAllowType": "none", "inboundAllowWorkload": []},
        },
        "defaultOptions": {
            "autoscaling": {"metric": "cpu", "target": 95, "minScale": 1, "maxScale": 1},
            "capacityAI": False,
            "timeoutSeconds": 5,
            "debug": False,
            "suspend": False,
        },
        "supportDynamicTags": False,
    },
    {"parentId": "0000-prod", "internalName": "nightly-report.prod.cpln.local", "currentReplicaCount": 0},
    created="2024-11-02T03:00:00.000Z",
    version=3,
)

WORKLOAD_SERVERLESS = workload(
    "api",
    "",
    {},
    {
        "type": "serverless",
        "containers": [
            {
                "name": "api",
                "image": "ghcr.io/acme/api:7.0.0",
                "cpu": "1",
                "memory": "2Gi",
                "ports": [{"protocol": "http", "number": 8080}],
                "env": [],
                "inheritEnv": False,
                "readinessProbe": probe({"tcpSocket": {"port": 8080}}, 0),
            }
        ],
        "firewallConfig": {
            "external": {"inboundAllowCIDR": [], "outboundAllowCIDR": []},
            "internal": {"inboundAllowType": "same-gvc", "inboundAllowWorkload": []},
        },
        "defaultOptions": {
            "autoscaling": {
                "metric": "concurrency",
                "target": 100,
                "minScale": 0,
                "maxScale": 20,
                "scaleToZeroDelay": 600,
                "maxConcurrency": 500,
            },
            "capacityAI": True,
            "timeoutSeconds": 30,
            "debug": True,
            "suspend": False,
        },
        "supportDynamicTags": False,
    },
    {
        "parentId": "0000-prod",
        "canonicalEndpoint": "https://api-prod-a1b2c3.cpln.app",
        "endpoint": "https://api-prod-a1b2c3.cpln.app",
        "internalName": "api.prod.cpln.local",
        "currentReplicaCount": 0,
    },
    created="2025-02-14T23:59:59.999Z",
)

WORKLOADS = listing(
    "workload", [WORKLOAD, WORKLOAD_CRON, WORKLOAD_SERVERLESS], self_href=f"/org/{ORG}/gvc/prod/workload"
)


def deployment(location: str, status: dict[str, Any], modified: str = "2025-02-20T09:05:00.000Z") -> dict:
    """One location's deployment of ``web`` (types-ts deployment.ts): named after the location."""
    base = f"/org/{ORG}/gvc/prod/workload/web"
    return {
        "name": location,
        "kind": "deployment",
        "lastModified": modified,
        "links": links(f"{base}/deployment/{location}", workload=base),
        "status": status,
    }


def container_status(name: str, image: str, replicas: int, ready: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "ready": replicas == ready,
        "resources": {"replicas": replicas, "replicasReady": ready, "cpu": 100, "memory": 128},
        "message": "",
        "restarts": {"count": 0},
    }


DEPLOYMENTS = listing(
    "deployment",
    [
        deployment(
            "aws-us-west-2",
            {
                "endpoint": "https://web-prod-a1b2c3.aws-us-west-2.controlplane.us",
                "remote": "https://aws-us-west-2.data.cpln.io",
                "lastProcessedVersion": 12,
                "expectedDeploymentVersion": 12,
                "internal": {},
                "ready": True,
                "deploying": False,
                "message": "",
                "versions": [
                    {
                        "name": "web-00012",
                        "created": "2025-02-20T09:00:30.000Z",
                        "workload": 12,
                        "gvc": 3,
                        "ready": True,
                        "message": "",
                        "zone": "us-west-2a",
                        "containers": {
                            "proxy": container_status("proxy", "nginx:1.27-alpine", 2, 2),
                            "app": container_status("app", "/org/acme/image/storefront:2.4.1", 2, 2),
                        },
                    }
                ],
            },
        ),
        deployment(
            "gcp-us-east1",
            {
                "endpoint": "https://web-prod-a1b2c3.gcp-us-east1.controlplane.us",
                "remote": "https://gcp-us-east1.data.cpln.io",
                "lastProcessedVersion": 11,
                "expectedDeploymentVersion": 12,
                "internal": {"syncFailed": False},
                "ready": False,
                "deploying": True,
                "message": "Waiting for 1 replica of app to become ready",
                "versions": [],
            },
            modified="2025-02-20T09:06:10.500Z",
        ),
    ],
    self_href=f"/org/{ORG}/gvc/prod/workload/web/deployment",
)


def identity_links(name: str, gvc: str = "prod") -> list[dict[str, str]]:
    return links(f"/org/{ORG}/gvc/{gvc}/identity/{name}", org=f"/org/{ORG}", gvc=f"/org/{ORG}/gvc/{gvc}")


#: An identity with every block (types-ts identity.ts), as Plinth serves it.
IDENTITY = {
    "id": "id-1",
    "name": "storefront",
    "kind": "identity",
    "version": 4,
    "description": "What the storefront workloads act as towards the clouds and the warehouse",
    "tags": {"team": "shop", "pci": True},
    "created": "2025-02-01T08:00:00.000Z",
    "lastModified": "2025-02-10T08:00:00.000Z",
    "links": identity_links("storefront"),
    "gvc": "prod",
    "aws": {
        "cloudAccountLink": f"/org/{ORG}/cloudaccount/aws-main",
        "policyRefs": ["aws::AmazonS3ReadOnlyAccess", "storefront-writer"],
        "trustPolicy": {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}, "Action": "sts:AssumeRole"}
            ],
        },
    },
    "gcp": {
        "cloudAccountLink": f"/org/{ORG}/cloudaccount/gcp-main",
        "scopes": ["https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/bigquery"],
        "bindings": [
            {"resource": "//cloudresourcemanager.googleapis.com/projects/shop", "roles": ["roles/viewer"]},
            {"roles": ["roles/bigquery.dataViewer"]},
        ],
    },
    "azure": {
        "cloudAccountLink": f"/org/{ORG}/cloudaccount/azure-main",
        "roleAssignments": [{"scope": "/subscriptions/s1/resourceGroups/shop", "roles": ["AcrPull", "Reader"]}],
    },
    "ngs": {
        "cloudAccountLink": f"/org/{ORG}/cloudaccount/nats",
        "pub": {"allow": ["orders.>"], "deny": ["orders.secret"]},
        "sub": {"allow": ["replies.*"]},
        "resp": {"max": 1, "ttl": "5m"},
        "subs": -1,
        "data": -1,
        "payload": 65536,
    },
    "networkResources": [
        {"name": "warehouse", "agentLink": f"/org/{ORG}/agent/dc1", "FQDN": "db.corp.example", "ports": [5432]},
        {
            "name": "ldap",
            "agentLink": f"/org/{ORG}/agent/dc1",
            "FQDN": "ldap.corp.example",
            "resolverIP": "10.0.0.53",
            "ports": [389, 636],
        },
        {"name": "legacy", "IPs": ["10.1.0.1", "10.1.0.2"], "ports": [8080]},
    ],
    "nativeNetworkResources": [
        {
            "name": "rds",
            "FQDN": "rds.internal.example",
            "ports": [5432],
            "awsPrivateLink": {"endpointServiceName": "com.amazonaws.vpce.us-west-2.vpce-svc-01af6c4c9260ac550"},
        },
        {
            "name": "cloudsql",
            "ports": [3306],
            "gcpServiceConnect": {"targetService": "projects/p/regions/r/serviceAttachments/sql"},
        },
    ],
    "status": {
        "objectName": "q2mt6vhcd5kea",
        "aws": {"usable": False, "lastError": "Plinth does not connect to cloud providers"},
        "gcp": {"usable": False, "lastError": "Plinth does not connect to cloud providers"},
        "azure": {"usable": False, "lastError": "Plinth does not connect to cloud providers"},
    },
}
#: What ``cpln identity create`` makes: no blocks, only the object name in its status.
IDENTITY_BARE = {
    "id": "id-2",
    "name": "reporter",
    "kind": "identity",
    "version": 1,
    "description": "reporter",
    "tags": {},
    "created": "2025-02-14T12:00:00.000Z",
    "lastModified": "2025-02-14T12:00:00.000Z",
    "links": identity_links("reporter"),
    "gvc": "prod",
    "status": {"objectName": "a7kq3hxl0m2zc"},
}
IDENTITIES = listing("identity", [IDENTITY, IDENTITY_BARE], self_href=f"/org/{ORG}/gvc/prod/identity")


IPSETS = listing(
    "ipset",
    [
        {
            "id": "ips-1",
            "name": "egress",
            "kind": "ipset",
            "version": 2,
            "description": "Static addresses the payment provider allow-lists, one per region",
            "tags": {"team": "payments", "reserved": True},
            "created": "2025-02-02T10:00:00.000Z",
            "lastModified": "2025-02-03T10:00:00.000Z",
            "links": links(f"/org/{ORG}/ipset/egress", org=f"/org/{ORG}"),
            "spec": {
                "link": f"/org/{ORG}/gvc/prod/workload/web",
                "locations": [
                    {"name": f"/org/{ORG}/location/aws-us-west-2", "retentionPolicy": "keep"},
                    {"name": f"/org/{ORG}/location/gcp-us-east1", "retentionPolicy": "free"},
                ],
            },
            "status": {"ipAddresses": []},
        },
        {
            "id": "ips-2",
            "name": "spare",
            "kind": "ipset",
            "version": 1,
            "description": "spare",
            "tags": {},
            "created": "2025-02-14T00:00:00.000Z",
            "lastModified": "2025-02-14T00:00:00.000Z",
            "links": links(f"/org/{ORG}/ipset/spare", org=f"/org/{ORG}"),
            "spec": {"link": f"/org/{ORG}/gvc/dev"},
            "status": {
                "ipAddresses": [],
                "warning": f"Cross-link misconfiguration: /org/{ORG}/gvc/dev must name this IP set in "
                "spec.loadBalancer.ipSet, with a dedicated load balancer",
            },
        },
    ],
)


AUDITCTXS = listing(
    "auditctx",
    [
        {
            "id": "actx-1",
            "name": "cpln",
            "kind": "auditctx",
            "version": 1,
            "description": "Built-in: the platform's own audit events",
            "tags": {},
            "created": "2025-01-01T00:00:00.000Z",
            "lastModified": "2025-01-01T00:00:00.000Z",
            "links": links(f"/org/{ORG}/auditctx/cpln", org=f"/org/{ORG}"),
            "origin": "builtin",
            "status": {},
        },
        {
            "id": "actx-2",
            "name": "payments",
            "kind": "auditctx",
            "version": 3,
            "description": "Who changed what in the payment services, kept for the auditors",
            "tags": {"team": "payments", "retention-days": 400},
            "created": "2025-02-05T16:30:00.000Z",
            "lastModified": "2025-02-06T16:30:00.000Z",
            "links": links(f"/org/{ORG}/auditctx/payments", org=f"/org/{ORG}"),
            "origin": "default",
            "status": {},
        },
    ],
)


CLOUDACCOUNTS = listing(
    "cloudaccount",
    [
        {
            "id": "ca-1",
            "name": "aws-prod",
            "kind": "cloudaccount",
            "version": 1,
            "description": "Production AWS account of the payments team, the one the auditors ask about",
            "tags": {"team": "payments"},
            "created": "2025-03-01T09:00:00.000Z",
            "lastModified": "2025-03-01T09:00:00.000Z",
            "links": links(f"/org/{ORG}/cloudaccount/aws-prod", org=f"/org/{ORG}"),
            "provider": "aws",
            "data": {"roleArn": f"arn:aws:iam::123456789012:role/cpln-{ORG}"},
            "status": {"usable": False, "lastChecked": "2025-03-01T09:00:00.000Z", "lastError": "no"},
        },
        {
            "id": "ca-2",
            "name": "gcp-data",
            "kind": "cloudaccount",
            "version": 2,
            "description": "gcp-data",
            "tags": {},
            "created": "2025-03-02T09:00:00.000Z",
            "lastModified": "2025-03-03T09:00:00.000Z",
            "links": links(f"/org/{ORG}/cloudaccount/gcp-data", org=f"/org/{ORG}"),
            "provider": "gcp",
            "data": {"projectId": "data-project-7"},
            "status": {"usable": False},
        },
        {
            "id": "ca-3",
            "name": "azure-main",
            "kind": "cloudaccount",
            "version": 1,
            "description": "Azure",
            "tags": {"env": "prod", "n": 1},
            "created": "2025-03-04T09:00:00.000Z",
            "lastModified": "2025-03-04T09:00:00.000Z",
            "links": links(f"/org/{ORG}/cloudaccount/azure-main", org=f"/org/{ORG}"),
            "provider": "azure",
            "data": {"secretLink": f"/org/{ORG}/secret/azure-connector"},
            "status": {},
        },
    ],
)


AGENTS = listing(
    "agent",
    [
        {
            "id": "ag-1",
            "name": "dc1",
            "kind": "agent",
            "version": 1,
            "description": "The agent in the first datacenter, next to the billing database cluster",
            "tags": {"site": "dc1"},
            "created": "2025-04-01T08:00:00.000Z",
            "lastModified": "2025-04-01T08:00:00.000Z",
            "links": links(f"/org/{ORG}/agent/dc1", org=f"/org/{ORG}"),
            "status": {
                "protocolVersion": "v2",
                "bootstrapConfig": {
                    "agentId": "ag-1",
                    "agentLink": f"/org/{ORG}/agent/dc1",
                    "hubEndpoint": "https://agent-hub.cpln.app",
                    "protocolVersion": "v2",
                },
            },
        },
        {
            "id": "ag-2",
            "name": "lab",
            "kind": "agent",
            "version": 2,
            "description": "lab",
            "tags": {},
            "created": "2025-04-02T08:00:00.000Z",
            "lastModified": "2025-04-03T08:00:00.000Z",
            "links": links(f"/org/{ORG}/agent/lab", org=f"/org/{ORG}"),
            "status": {"protocolVersion": "v2"},
        },
    ],
)


#: Quotas as Plinth serves them: org-wide ones without dimensions, per-GVC ones with the GVC.
QUOTAS = listing(
    "quota",
    [
        {
            "id": "0775c8ea-d6f5-5054-9d7a-a82931ae1f23",
            "name": "workloads-per-gvc",
            "kind": "quota",
            "version": 2,
            "description": "Max number of workloads in a gvc",
            "created": "2025-04-01T08:00:00.000Z",
            "lastModified": "2025-04-02T08:00:00.000Z",
            "links": links(f"/org/{ORG}/quota/0775c8ea-d6f5-5054-9d7a-a82931ae1f23", org=f"/org/{ORG}"),
            "unit": "workloads",
            "dimensions": {"gvc": "prod"},
            "max": 50,
            "current": 12,
            "origin": "default",
            "status": {},
        },
        {
            "id": "50bd2208-6939-50d2-a240-b05fc70e51db",
            "name": "agents",
            "kind": "quota",
            "version": 1,
            "description": "Max number of agents",
            "created": "2025-04-01T08:00:00.000Z",
            "lastModified": "2025-04-01T08:00:00.000Z",
            "links": links(f"/org/{ORG}/quota/50bd2208-6939-50d2-a240-b05fc70e51db", org=f"/org/{ORG}"),
            "unit": "agents",
            "dimensions": {},
            "max": 100,
            "current": 0,
            "origin": "default",
            "status": {},
        },
    ],
)


#: Images as the platform lists pushed ones (Plinth never holds any: nothing pushes).
IMAGES = listing(
    "image",
    [
        {
            "id": "img-1",
            "name": "web:1.4.2",
            "kind": "image",
            "version": 1,
            "description": "web:1.4.2",
            "tags": {"build": "ci-812"},
            "created": "2025-05-01T07:00:00.000Z",
            "lastModified": "2025-05-01T07:00:00.000Z",
            "links": links(f"/org/{ORG}/image/web:1.4.2", org=f"/org/{ORG}"),
            "repository": "web",
            "tag": "1.4.2",
            "digest": "sha256:9b2a6d0c4e1f3a5b7c9d0e2f4a6b8c0d1e3f5a7b9c0d2e4f6a8b0c1d3e5f7a9b",
            "manifest": {"schemaVersion": 2},
        },
        {
            "id": "img-2",
            "name": "worker:latest",
            "kind": "image",
            "version": 1,
            "description": "worker:latest",
            "tags": {},
            "created": "2025-05-02T07:00:00.000Z",
            "lastModified": "2025-05-02T07:00:00.000Z",
            "links": links(f"/org/{ORG}/image/worker:latest", org=f"/org/{ORG}"),
            "repository": "worker",
            "tag": "latest",
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


def location(
    name: str, origin: str, provider: str, enabled: bool, region: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A location as Plinth serves it (types-ts location.ts): built-in ones carry region, geo and cpln/ tags."""
    doc: dict[str, Any] = {
        "id": f"00000000-0000-4000-9000-{zlib.crc32(name.encode()) % 10**12:012d}",
        "name": name,
        "kind": "location",
        "version": 1,
        "description": extra.pop("description", name),
        "tags": extra.pop("tags", {}),
        "origin": origin,
        "provider": provider,
        "created": "2025-03-01T00:00:00.000Z",
        "lastModified": "2025-03-01T00:00:00.000Z",
        "links": links(f"/org/{ORG}/location/{name}", org=f"/org/{ORG}"),
        "spec": {"enabled": enabled},
        "status": extra.pop("status", {}),
    }
    if region is not None:
        doc["region"] = region
    return doc


LOCATION = location(
    "aws-us-east-1",
    "builtin",
    "aws",
    True,
    "us-east-1",
    description="AWS us-east-1 (Ashburn, Virginia, United States)",
    tags={"cpln/city": "Ashburn", "cpln/country": "United States", "cpln/continent": "North America"},
    status={
        "geo": {
            "lat": 39.04,
            "lon": -77.49,
            "continent": "North America",
            "country": "United States",
            "state": "Virginia",
            "city": "Ashburn",
        },
        "ipRanges": [],
    },
)
LOCATIONS = listing(
    "location",
    [
        LOCATION,
        location(
            "gcp-me-west1",
            "builtin",
            "gcp",
            False,
            "me-west1",
            description="GCP me-west1 (Tel Aviv, Tel Aviv, Israel)",
            tags={"cpln/city": "Tel Aviv", "cpln/country": "Israel", "cpln/continent": "Asia", "team": "edge"},
        ),
        location("basement", "custom", "byok", True, description=LONG, tags={"rack": 2}),
    ],
)
