"""``to_terraform`` for identities: the provider's ``cpln_identity`` layout (TF resource_identity.go),
parsed back with python-hcl2 and compared with the wire document."""

from __future__ import annotations

import json
from typing import Any

from plinth.convert import to_terraform
from tests.cli import golden_docs as d
from tests.convert.test_terraform import resources


def storefront() -> dict[str, Any]:
    return resources(to_terraform(d.IDENTITY))[("cpln_identity", "storefront")]


def test_head_carries_the_gvc_and_string_tags_and_no_server_fields() -> None:
    body = storefront()
    assert (body["name"], body["gvc"], body["description"]) == ("storefront", "prod", d.IDENTITY["description"])
    assert body["tags"] == {"team": "shop", "pci": "true"}
    for server_owned in ("id", "version", "status", "links", "created", "aws", "networkResources"):
        assert server_owned not in body


def test_provider_blocks_are_access_policies() -> None:
    body = storefront()
    aws = body["aws_access_policy"][0]
    assert aws["cloud_account_link"] == "/org/acme/cloudaccount/aws-main"
    assert aws["policy_refs"] == ["aws::AmazonS3ReadOnlyAccess", "storefront-writer"]
    trust = aws["trust_policy"][0]
    assert trust["version"] == "2012-10-17"
    # Statement values are strings in the provider: nested values as their JSON text.
    [statement] = trust["statement"]
    assert statement["Effect"] == "Allow" and statement["Action"] == "sts:AssumeRole"
    assert json.loads(statement["Principal"].replace('\\"', '"')) == {"AWS": "arn:aws:iam::123456789012:root"}
    gcp = body["gcp_access_policy"][0]
    assert gcp["scopes"] == "https://www.googleapis.com/auth/cloud-platform,https://www.googleapis.com/auth/bigquery"
    assert gcp["binding"] == [
        {"resource": "//cloudresourcemanager.googleapis.com/projects/shop", "roles": ["roles/viewer"]},
        {"roles": ["roles/bigquery.dataViewer"]},
    ]
    azure = body["azure_access_policy"][0]
    assert azure["role_assignment"] == [
        {"scope": "/subscriptions/s1/resourceGroups/shop", "roles": ["AcrPull", "Reader"]}
    ]
    ngs = body["ngs_access_policy"][0]
    assert (ngs["subs"], ngs["data"], ngs["payload"]) == (-1, -1, 65536)
    assert ngs["pub"] == [{"allow": ["orders.>"], "deny": ["orders.secret"]}]
    assert ngs["resp"] == [{"max": 1, "ttl": "5m"}]


def test_resources_are_repeated_blocks_in_snake_case() -> None:
    body = storefront()
    assert body["network_resource"] == [
        {"name": "warehouse", "agent_link": "/org/acme/agent/dc1", "fqdn": "db.corp.example", "ports": [5432]},
        {
            "name": "ldap",
            "agent_link": "/org/acme/agent/dc1",
            "fqdn": "ldap.corp.example",
            "resolver_ip": "10.0.0.53",
            "ports": [389, 636],
        },
        {"name": "legacy", "ips": ["10.1.0.1", "10.1.0.2"], "ports": [8080]},
    ]
    native = body["native_network_resource"]
    assert native[0]["aws_private_link"] == [
        {"endpoint_service_name": "com.amazonaws.vpce.us-west-2.vpce-svc-01af6c4c9260ac550"}
    ]
    assert native[1] == {
        "name": "cloudsql",
        "ports": [3306],
        "gcp_service_connect": [{"target_service": "projects/p/regions/r/serviceAttachments/sql"}],
    }


def test_an_identity_without_blocks_has_only_its_head() -> None:
    body = resources(to_terraform(d.IDENTITY_BARE))[("cpln_identity", "reporter")]
    assert body == {"name": "reporter", "description": "reporter", "tags": {}, "gvc": "prod"}
