"""API items -> Terraform for the official provider's resources (TF docs/resources).

``to_terraform(item_or_list) -> str``: one ``resource`` block per item, valid HCL. Kinds:
``cpln_org`` (its settings), ``cpln_gvc``, ``cpln_domain``, ``cpln_volume_set``,
``cpln_service_account``, ``cpln_group``, ``cpln_policy``, ``cpln_location`` (a BYOK location:
``cpln_custom_location``), ``cpln_ipset`` (``link`` and one ``location`` block per location),
``cpln_audit_context`` (name, description and tags: the provider only forgets one on destroy),
``cpln_secret`` (without its values, TF resource_secret.go), ``cpln_cloud_account`` (one block named
after the provider: ``aws {role_arn}``, ``gcp {project_id}``, ``azure``/``ngs {secret_link}``),
``cpln_agent`` (name, description and tags),
and in modules of their own ``cpln_workload`` (``terraform_workload``, TF resource_workload.go) and
``cpln_identity`` (``terraform_identity``, TF resource_identity.go). The provider names members,
principals and targets relative to the org (``group/devs``, ``user/ada@example.com``; target
links by name, with ``gvc`` beside them for GVC-scoped kinds), so links are written that way.
Users have no resource (they join by invitation). Server-owned
fields (id, version, status, links...) are left out: Terraform computes them. Tag values are
strings in the provider's schema, so other JSON values are written as their JSON text. Kinds
without a mapping raise ``ValueError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from plinth.convert.hcl import Attribute, Block, label, render
from plinth.convert.terraform_identity import identity
from plinth.convert.terraform_workload import workload
from plinth.convert.tfbody import Body, common, generic, gvc_of, snake, tag_strings
from plinth.kindfacts import TERRAFORM_RESOURCES


def domain(item: dict[str, Any]) -> Body:
    spec = dict(item.get("spec") or {})
    ports = spec.pop("ports", None) or []
    spec_body = generic(spec)
    port_blocks = [Block("ports", generic(port, {"routes": "route", "canaries": "canary"})) for port in ports]
    # The provider requires a spec block holding at least one (possibly empty) ports block.
    spec_body.extend(port_blocks or [Block("ports", [])])
    return [*common(item), Block("spec", spec_body)]


def volume_set(item: dict[str, Any]) -> Body:
    spec = dict(item.get("spec") or {})
    encryption = spec.pop("customEncryption", None)
    body = [*common(item), Attribute("gvc", item.get("gvc") or gvc_of(item))]
    body += generic(spec)
    if isinstance(encryption, dict):
        configured = encryption.get("regions") or {}
        regions = {region: {"key_id": value.get("keyId")} for region, value in configured.items()}
        body.append(Block("custom_encryption", [Attribute("regions", regions)]))
    return body


def gvc(item: dict[str, Any]) -> Body:
    spec = dict(item.get("spec") or {})
    placement = spec.pop("staticPlacement", None) or {}
    body = common(item)
    links = placement.get("locationLinks") or []
    body.append(Attribute("locations", [str(link).rsplit("/", 1)[-1] for link in links]))
    if spec.get("pullSecretLinks"):
        body.append(Attribute("pull_secrets", [str(link).rsplit("/", 1)[-1] for link in spec.pop("pullSecretLinks")]))
    env = spec.pop("env", None)
    if isinstance(env, list):
        body.append(Attribute("env", {str(e.get("name")): str(e.get("value", "")) for e in env if isinstance(e, dict)}))
    body += generic(spec, {"multiZone": "multi_zone"}, skip=("tracing", "sidecar", "keda"))
    return body


def org(item: dict[str, Any]) -> Body:
    spec = item.get("spec") or {}
    body: Body = [
        Attribute("description", item.get("description", "")),
        Attribute("tags", tag_strings(item.get("tags"))),
    ]
    if spec.get("sessionTimeoutSeconds") is not None:
        body.append(Attribute("session_timeout_seconds", spec["sessionTimeoutSeconds"]))
    for key in ("authConfig", "observability", "security"):
        if isinstance(spec.get(key), dict):
            body.append(Block(snake(key), generic(spec[key])))
    return body


def _org_relative(link: Any) -> str:
    """``/org/acme/group/devs`` or ``//group/devs`` -> ``group/devs`` (the provider's link form)."""
    text = str(link)
    if text.startswith("//"):
        return text[2:]
    parts = text.split("/")
    return "/".join(parts[3:]) if len(parts) > 3 and parts[1] == "org" else text


def _term_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _query(name: str, query: Any) -> Block:
    """A ``member_query``/``target_query`` block: ``fetch`` and ``spec {match, terms {...}}``."""
    query = query if isinstance(query, dict) else {}
    spec = query.get("spec") or {}
    spec_body: Body = [Attribute("match", spec.get("match", "all"))]
    for term in spec.get("terms") or []:
        term_body: Body = [Attribute("op", term.get("op", "="))]
        term_body += [Attribute(key, term[key]) for key in ("property", "rel", "tag") if key in term]
        if term.get("value") is not None:
            term_body.append(Attribute("value", _term_value(term["value"])))
        spec_body.append(Block("terms", term_body))
    return Block(name, [Attribute("fetch", query.get("fetch", "items")), Block("spec", spec_body)])


def service_account(item: dict[str, Any]) -> Body:
    return common(item)


def group(item: dict[str, Any]) -> Body:
    body = common(item)
    members = [_org_relative(link) for link in item.get("memberLinks") or []]
    users = [m.split("/", 1)[1] for m in members if m.startswith("user/")]
    accounts = [m.split("/", 1)[1] for m in members if m.startswith("serviceaccount/")]
    if users:
        body.append(Attribute("user_ids_and_emails", users))
    if accounts:
        body.append(Attribute("service_accounts", accounts))
    if isinstance(item.get("memberQuery"), dict):
        body.append(_query("member_query", item["memberQuery"]))
    if isinstance(item.get("identityMatcher"), dict):
        body.append(Block("identity_matcher", generic(item["identityMatcher"])))
    return body


def policy(item: dict[str, Any]) -> Body:
    body = common(item)
    body.append(Attribute("target_kind", item.get("targetKind", "")))
    targets = [_org_relative(link).split("/") for link in item.get("targetLinks") or []]
    gvcs = [t[1] for t in targets if len(t) == 4 and t[0] == "gvc"]
    if gvcs:
        body.append(Attribute("gvc", gvcs[0]))
    if item.get("target") == "all":
        body.append(Attribute("target", "all"))
    elif targets:
        body.append(Attribute("target_links", [t[-1] for t in targets]))
    if isinstance(item.get("targetQuery"), dict):
        body.append(_query("target_query", item["targetQuery"]))
    for binding in item.get("bindings") or []:
        principals = [_org_relative(link) for link in binding.get("principalLinks") or []]
        permissions = list(binding.get("permissions") or [])
        body.append(Block("binding", [Attribute("permissions", permissions), Attribute("principal_links", principals)]))
    return body


def location(item: dict[str, Any]) -> Body:
    """``cpln_location`` (a built-in location: its description is the provider's to set) or,
    for a BYOK location, ``cpln_custom_location`` with its ``cloud_provider``."""
    enabled = Attribute("enabled", bool((item.get("spec") or {}).get("enabled", True)))
    if item.get("origin") == "builtin":
        return [Attribute("name", item.get("name", "")), Attribute("tags", tag_strings(item.get("tags"))), enabled]
    return [*common(item), Attribute("cloud_provider", str(item.get("provider") or "byok")), enabled]


def _resource_of(kind: str, item: dict[str, Any]) -> str:
    """The resource type of ``item``: the kind's, except a BYOK location's (TF resource_custom_location.go)."""
    if kind == "location" and item.get("origin") != "builtin":
        return "cpln_custom_location"
    return RESOURCES[kind][0]


def ipset(item: dict[str, Any]) -> Body:
    spec = item.get("spec") or {}
    body = common(item)
    if spec.get("link"):
        body.append(Attribute("link", spec["link"]))
    for place in spec.get("locations") or []:
        retention = place.get("retentionPolicy", "keep")
        body.append(Block("location", [Attribute("name", place.get("name")), Attribute("retention_policy", retention)]))
    return body


#: Secret types the provider takes as an attribute (a JSON string, or the dictionary's map); the
#: others are blocks (TF resource_secret.go).
SECRET_ATTRIBUTES = frozenset({"gcp", "docker", "azure-sdk", "dictionary"})


def secret(item: dict[str, Any]) -> Body:
    """A secret's name, description, tags and type, never its values: a GET does not carry them,
    and this form is never to hold them even when given (a revealed item). The type's block is
    empty, or its attribute ``null``, so Terraform refuses the file until the values are filled
    in, rather than writing empty ones over the secret."""
    body = common(item)
    kind = str(item.get("type") or "opaque")
    name = kind.replace("-", "_")
    body.append(Attribute(name, None) if kind in SECRET_ATTRIBUTES else Block(name, []))
    return body


#: A cloud account's ``data`` field -> the provider's attribute in its block
#: (docs.controlplane.com/reference/cloudaccount).
CLOUD_ACCOUNT_FIELDS = {"roleArn": "role_arn", "projectId": "project_id", "secretLink": "secret_link"}


def cloud_account(item: dict[str, Any]) -> Body:
    """The common fields and one block named after the provider with its settings."""
    raw = item.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    settings: Body = [Attribute(tf, data[key]) for key, tf in CLOUD_ACCOUNT_FIELDS.items() if key in data]
    return [*common(item), Block(str(item.get("provider") or "aws"), settings)]


#: Kind -> how its item becomes the body of its resource; a kind not named here writes the
#: common attributes only (name, description, tags).
BODIES: dict[str, Callable[[dict[str, Any]], Body]] = {
    "org": org,
    "gvc": gvc,
    "domain": domain,
    "volumeset": volume_set,
    "serviceaccount": service_account,
    "group": group,
    "policy": policy,
    "workload": workload,
    "location": location,
    "identity": identity,
    "ipset": ipset,
    "secret": secret,
    "cloudaccount": cloud_account,
}
#: Kind -> (the provider's resource, its body), for every kind that declares a resource
#: (``KindSpec.presentation.terraform_resource``, read from the generated ``plinth.kindfacts``).
RESOURCES: dict[str, tuple[str, Callable[[dict[str, Any]], Body]]] = {
    kind: (resource, BODIES.get(kind, common)) for kind, resource in TERRAFORM_RESOURCES.items() if resource
}


def to_terraform(item_or_list: dict[str, Any]) -> str:
    """HCL for an item or a ``{kind: list, items}``; ends with a newline."""
    items = item_or_list.get("items") if item_or_list.get("kind") in ("list", "queryresult") else [item_or_list]
    blocks: Body = []
    for item in items or []:
        kind = item.get("kind")
        if kind not in RESOURCES:
            raise ValueError(f"no Terraform resource for kind {kind!r}")
        build = RESOURCES[kind][1]
        resource = _resource_of(kind, item)
        blocks.append(Block("resource", build(item), (resource, label(str(item.get("name", kind))))))
    return render(blocks) + "\n" if blocks else ""
