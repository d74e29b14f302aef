"""Cross-field defaults and normalisation for a domain, run after the schema and before the rules.

The defaults below depend on other fields or on the name, so the models cannot declare them.
They are written into the stored spec, which makes a stored domain re-validate to itself.

- ``dnsMode``: ``ns`` when ``gvcLink`` is set (AI ``skills/domain``), unless
  ``ns`` would be rejected for this domain (an apex or ``.internal`` name, or an explicit
  ``certChallengeType: http01``); ``cname`` otherwise. A default never causes an error.
- ``certChallengeType``: ``dns01`` where ``http01`` is not allowed (``ns`` mode, a spec-level
  ``workloadLink``); ``http01`` for other ``cname`` domains; left unset on ``.internal``
  domains, which forbid the field.
- routes with neither ``prefix`` nor ``regex`` get ``prefix: /`` (docs.controlplane.com/reference/domain: the default
  is ``/``).
- port 443 with ``http``/``http2`` gets the default TLS block when it has none.
- cors ``allowHeaders``/``exposeHeaders`` are lowercased, keeping the first of any names that
  become equal, since header names are case-insensitive.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.base import Item, KindContext
from plinth.kinds.domain.models import default_tls
from plinth.kinds.domain.names import is_apex, is_internal

TLS_DEFAULT_PORT = 443
HTTP_PROTOCOLS = frozenset({"http", "http2"})


def prepare_domain(item: Item, old: Item | None, ctx: KindContext) -> None:
    """Fill the cross-field defaults of ``item["spec"]`` in place (see the module docstring)."""
    spec: dict[str, Any] = item.setdefault("spec", {})
    name: str = item["name"]
    spec.setdefault("dnsMode", _default_dns_mode(spec, name))
    challenge = _default_challenge(spec, name)
    if challenge is not None:
        spec.setdefault("certChallengeType", challenge)
    for port in spec.get("ports") or []:
        _prepare_port(port)


def _default_dns_mode(spec: dict[str, Any], name: str) -> str:
    ns_allowed = not is_apex(name) and not is_internal(name) and spec.get("certChallengeType") != "http01"
    return "ns" if spec.get("gvcLink") and ns_allowed else "cname"


def _default_challenge(spec: dict[str, Any], name: str) -> str | None:
    if is_internal(name):
        return None
    if spec["dnsMode"] == "ns" or spec.get("workloadLink"):
        return "dns01"
    return "http01"


def _prepare_port(port: dict[str, Any]) -> None:
    for route in port.get("routes") or []:
        if "prefix" not in route and "regex" not in route:
            route["prefix"] = "/"
    cors = port.get("cors")
    if cors is not None:
        for field in ("allowHeaders", "exposeHeaders"):
            if field in cors:
                cors[field] = _lowercase_unique(cors[field])
    if port["number"] == TLS_DEFAULT_PORT and port["protocol"] in HTTP_PROTOCOLS and "tls" not in port:
        port["tls"] = default_tls()


def _lowercase_unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(name.lower() for name in names))
