"""Identity items -> the provider's ``cpln_identity`` resource (TF resource_identity.go).

The provider names each provider block ``<provider>_access_policy`` and each resource list
entry a repeated block (``network_resource``, ``native_network_resource``); inside them:

- repeated objects are singular blocks (``bindings`` -> ``binding``, ``roleAssignments`` ->
  ``role_assignment``); ``IPs``, ``FQDN``, ``resolverIP`` are ``ips``, ``fqdn``, ``resolver_ip``;
- ``gcp.scopes`` is one comma-joined string;
- ``aws.trustPolicy`` is a ``trust_policy`` block whose ``statement`` is a list of string maps:
  a statement value that is not a string is written as its JSON text, which the provider
  expands back into the object when it calls the API (and writes on import);
- links (cloud accounts, agents) are kept as the API returns them.

``memcacheAccess`` and ``spicedbAccess`` have no provider argument and are left out, with
``status`` (computed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from plinth.convert.hcl import Attribute, Block
from plinth.convert.tfbody import Body, common, generic, gvc_of

BLOCK_NAMES = {"bindings": "binding", "roleAssignments": "role_assignment"}
RESOURCE_BLOCKS = {"networkResources": "network_resource", "nativeNetworkResources": "native_network_resource"}


def _statement(statement: Any) -> dict[str, str]:
    entries = statement.items() if isinstance(statement, dict) else []
    return {str(k): v if isinstance(v, str) else json.dumps(v, separators=(",", ":")) for k, v in entries}


def _aws(aws: dict[str, Any]) -> Body:
    body = generic(aws, skip=("trustPolicy",))
    trust = aws.get("trustPolicy")
    if isinstance(trust, dict):
        inner: Body = [Attribute("version", trust.get("Version", "2012-10-17"))]
        if isinstance(trust.get("Statement"), list):
            inner.append(Attribute("statement", [_statement(s) for s in trust["Statement"]]))
        body.append(Block("trust_policy", inner))
    return body


def _gcp(gcp: dict[str, Any]) -> Body:
    body = generic(gcp, BLOCK_NAMES, skip=("scopes",))
    if isinstance(gcp.get("scopes"), list):
        body.insert(1, Attribute("scopes", ",".join(str(scope) for scope in gcp["scopes"])))
    return body


PROVIDERS: dict[str, Callable[[dict[str, Any]], Body]] = {
    "aws": _aws,
    "gcp": _gcp,
    "azure": lambda block: generic(block, BLOCK_NAMES),
    "ngs": generic,
}


def identity(item: dict[str, Any]) -> Body:
    body = [*common(item), Attribute("gvc", item.get("gvc") or gvc_of(item))]
    for provider, build in PROVIDERS.items():
        if isinstance(item.get(provider), dict):
            body.append(Block(f"{provider}_access_policy", build(item[provider])))
    for key, block in RESOURCE_BLOCKS.items():
        body += [Block(block, generic(resource)) for resource in item.get(key) or [] if isinstance(resource, dict)]
    return body
