"""``to_terraform``: valid HCL (parsed back with python-hcl2) in the provider's layout (TF docs/resources)."""

from __future__ import annotations

from typing import Any

import hcl2
import pytest

from plinth.convert import to_terraform
from tests.cli import golden_docs as d


def unquote(value: Any) -> Any:
    """python-hcl2 keeps the quotes of strings and keys; strip them for comparisons."""
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    if isinstance(value, dict):
        return {unquote(k): unquote(v) for k, v in value.items() if k != "__is_block__"}
    if isinstance(value, list):
        return [unquote(v) for v in value]
    return value


def resources(text: str) -> dict[tuple[str, str], dict[str, Any]]:
    parsed = unquote(hcl2.loads(text))
    found = {}
    for entry in parsed["resource"]:
        for kind, by_label in entry.items():
            for name, body in by_label.items():
                found[(kind, name)] = body
    return found


def test_domain_has_spec_and_ports_blocks_with_snake_case_attributes() -> None:
    found = resources(to_terraform(d.DOMAIN))
    body = found[("cpln_domain", "api_example_com")]
    assert body["name"] == "api.example.com"
    assert body["tags"]["cpln/managed"] == "true"
    assert body["tags"]["tier"] == "1"  # the provider's tags are strings
    assert "owner" not in body["tags"]  # a null tag is no tag
    spec = body["spec"][0]
    assert spec["dns_mode"] == "cname"
    assert spec["accept_all_hosts"] is False
    port = spec["ports"][0]
    assert (port["number"], port["protocol"]) == (443, "http2")
    assert port["route"][0] == {"prefix": "/", "workload_link": "/org/acme/gvc/prod/workload/api"}
    for server_owned in ("id", "cpln_id", "version", "status", "links", "created"):
        assert server_owned not in body


def test_domain_without_ports_still_gets_an_empty_ports_block() -> None:
    item = {**d.DOMAIN_3, "spec": {"dnsMode": "cname"}}
    spec = resources(to_terraform(item))[("cpln_domain", "empty_example_com")]["spec"][0]
    assert spec["ports"] == [{}]


def test_volume_set_gvc_capacity_and_nested_blocks() -> None:
    item = {
        **d.VOLUMESET,
        "spec": {
            **d.VOLUMESET["spec"],
            "customEncryption": {"regions": {"aws-us-west-2": {"keyId": "arn:aws:kms:k"}}},
            "autoscaling": {"maxCapacity": 100, "predictive": {"enabled": True, "lookbackHours": 24}},
        },
    }
    body = resources(to_terraform(item))[("cpln_volume_set", "data")]
    assert (body["gvc"], body["initial_capacity"], body["file_system_type"]) == ("prod", 10, "ext4")
    assert body["snapshots"][0] == {"create_final_snapshot": True, "retention_duration": "7d"}
    assert body["autoscaling"][0]["predictive"][0] == {"enabled": True, "lookback_hours": 24}
    assert body["custom_encryption"][0]["regions"] == {"aws-us-west-2": {"key_id": "arn:aws:kms:k"}}


def test_gvc_locations_are_names_and_org_settings_are_blocks() -> None:
    found = resources(to_terraform(d.listing("gvc", [d.GVC_PROD, d.GVC_DEV])))
    assert found[("cpln_gvc", "prod")]["locations"] == ["aws-us-west-2", "gcp-us-east1"]
    assert found[("cpln_gvc", "dev")]["locations"] == []
    org = resources(to_terraform(d.ORG_ITEM))[("cpln_org", "acme")]
    assert org["session_timeout_seconds"] == 900
    assert org["auth_config"][0] == {"domain_auto_members": [], "saml_only": False}


def test_builtin_locations_are_cpln_location_and_byok_ones_cpln_custom_location() -> None:
    found = resources(to_terraform(d.LOCATIONS))
    assert found[("cpln_location", "aws_us_east_1")] == {
        "name": "aws-us-east-1",
        "tags": {"cpln/city": "Ashburn", "cpln/country": "United States", "cpln/continent": "North America"},
        "enabled": True,
    }
    assert found[("cpln_location", "gcp_me_west1")]["enabled"] is False
    custom = found[("cpln_custom_location", "basement")]
    assert (custom["cloud_provider"], custom["enabled"], custom["tags"]) == ("byok", True, {"rack": "2"})
    assert custom["description"] == d.LONG


def test_template_markers_and_quotes_survive_a_round_trip() -> None:
    item = {**d.DOMAIN_3, "description": 'uses ${var} and %{if} and "quotes"'}
    body = resources(to_terraform(item))[("cpln_domain", "empty_example_com")]
    assert body["description"] in ('uses $${var} and %%{if} and \\"quotes\\"', 'uses ${var} and %{if} and "quotes"')
    assert "$${var}" in to_terraform(item)


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="gadget"):
        to_terraform(d.UNKNOWN_KIND)


def test_service_account_group_and_policy_use_the_providers_org_relative_links() -> None:
    account = {"kind": "serviceaccount", "name": "ci", "description": "CI", "tags": {}, "keys": [{"name": "k"}]}
    group = {
        "kind": "group",
        "name": "devs",
        "description": "devs",
        "tags": {"team": "core"},
        "memberLinks": ["/org/acme/user/ada@example.com", "/org/acme/serviceaccount/ci"],
        "memberQuery": {"kind": "user", "spec": {"terms": [{"op": "=", "tag": "sso", "value": True}]}},
        "identityMatcher": {"expression": "groups", "language": "jmespath"},
    }
    policy = {
        "kind": "policy",
        "name": "deployers",
        "tags": {},
        "targetKind": "workload",
        "targetLinks": ["/org/acme/gvc/prod/workload/web"],
        "bindings": [
            {"permissions": ["view", "edit"], "principalLinks": ["/org/acme/group/devs", "//gvc/prod/identity/x"]}
        ],
    }
    everyone = {"kind": "policy", "name": "all-gvcs", "targetKind": "gvc", "target": "all", "targetLinks": []}
    found = resources(to_terraform({"kind": "list", "items": [account, group, policy, everyone]}))
    assert found[("cpln_service_account", "ci")] == {"name": "ci", "description": "CI", "tags": {}}
    devs = found[("cpln_group", "devs")]
    assert (devs["user_ids_and_emails"], devs["service_accounts"]) == (["ada@example.com"], ["ci"])
    terms = devs["member_query"][0]["spec"][0]["terms"]
    assert terms == [{"op": "=", "tag": "sso", "value": "true"}]  # the provider's term values are strings
    assert devs["identity_matcher"][0] == {"expression": "groups", "language": "jmespath"}
    deployers = found[("cpln_policy", "deployers")]
    assert (deployers["target_kind"], deployers["gvc"], deployers["target_links"]) == ("workload", "prod", ["web"])
    assert deployers["binding"][0]["principal_links"] == ["group/devs", "gvc/prod/identity/x"]
    assert found[("cpln_policy", "all_gvcs")]["target"] == "all"
    assert "target_links" not in found[("cpln_policy", "all_gvcs")]


def test_ip_set_has_its_link_and_one_location_block_per_location() -> None:
    egress, spare = d.IPSETS["items"]
    body = resources(to_terraform(egress))[("cpln_ipset", "egress")]
    assert body["link"] == "/org/acme/gvc/prod/workload/web"
    assert body["location"] == [
        {"name": "/org/acme/location/aws-us-west-2", "retention_policy": "keep"},
        {"name": "/org/acme/location/gcp-us-east1", "retention_policy": "free"},
    ]
    assert body["tags"] == {"team": "payments", "reserved": "true"}
    assert "spec" not in body and "status" not in body
    bare = {**spare, "spec": {}}
    assert resources(to_terraform(bare))[("cpln_ipset", "spare")] == {
        "name": "spare",
        "description": "spare",
        "tags": {},
    }


def test_audit_context_is_name_description_and_tags() -> None:
    found = resources(to_terraform(d.AUDITCTXS))
    assert found[("cpln_audit_context", "payments")] == {
        "name": "payments",
        "description": "Who changed what in the payment services, kept for the auditors",
        "tags": {"team": "payments", "retention-days": "400"},
    }
    assert "origin" not in found[("cpln_audit_context", "cpln")]


@pytest.mark.parametrize(
    ("kind", "block"),
    [("opaque", True), ("tls", True), ("nats-account", True), ("docker", False), ("dictionary", False)],
)
def test_a_secret_has_its_type_and_never_its_values(kind: str, block: bool) -> None:
    revealed = {**d.SECRETS["items"][0], "type": kind, "data": {"payload": "CANARY-tf"}}
    text = to_terraform(revealed)
    assert "CANARY-tf" not in text, "not even from a revealed item"
    body = resources(text)[("cpln_secret", "tls_cert")]
    assert body["name"] == "tls-cert" and body["description"].startswith("Wildcard certificate")
    field = kind.replace("-", "_")
    assert (body[field] == [{}]) if block else (body[field] is None), body
