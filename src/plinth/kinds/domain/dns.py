"""The DNS records a user must publish for a domain: ``status.dnsConfig`` (docs.controlplane.com/reference/domain).

Plinth does not run DNS, so these records are instructions, derived only from the spec, the
name, the org and the served GVC's alias. Decisions where the sources are silent:

- ``host`` is the fully qualified record name (``app.example.com``), never zone-relative.
- cname mode: a CNAME to ``{gvcAlias}.t.{base}`` once a GVC with an alias is known: at
  ``*.{domain}`` for gvcLink (subdomain) routing, else at the domain itself, plus
  ``*.{domain}`` when ``acceptAllSubdomains`` is on. With ``dns01``, the ACME challenge
  name ``_acme-challenge.{domain}`` is delegated by CNAME to ``{domain}.acme.{base}``
  (one record covers the wildcard certificate too). ``{base}`` is the server's base domain
  (``--base-domain``, ``cpln.app`` unless set: the platform's, so records look as there).
- ns mode: the four NS records at the domain; the challenge lives in the delegated zone.
- Every domain except ``.internal`` ones gets the ownership TXT ``_cpln.{apex}`` whose value
  is the org name (docs.controlplane.com/reference/domain takes the org name or GUID as proof; TTL 600).
- TTLs: CNAME 300 s, NS 3600 s, TXT 600 s.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.domain.names import apex_of, is_internal

CNAME_TTL = 300
NS_TTL = 3600
TXT_TTL = 600
NAME_SERVERS: tuple[str, ...] = ("ns1.cpln.cloud", "ns2.cpln.cloud", "ns1.cpln.live", "ns2.cpln.live")
#: Labels under the base domain: GVC targets and ACME challenge delegations.
GVC_TARGET_LABEL = "t"
ACME_DELEGATION_LABEL = "acme"


def _record(record_type: str, ttl: int, host: str, value: str) -> dict[str, Any]:
    return {"type": record_type, "ttl": ttl, "host": host, "value": value}


def dns_config(
    name: str, spec: dict[str, Any], org: str, gvc_alias: str | None, base_domain: str
) -> list[dict[str, Any]]:
    """The records, routing records first, then the ACME delegation, then ownership."""
    records: list[dict[str, Any]] = []
    if spec.get("dnsMode") == "ns":
        records += [_record("NS", NS_TTL, name, server) for server in NAME_SERVERS]
    else:
        if gvc_alias:
            target = f"{gvc_alias}.{GVC_TARGET_LABEL}.{base_domain}"
            records += [_record("CNAME", CNAME_TTL, host, target) for host in _cname_hosts(name, spec)]
        if spec.get("certChallengeType") == "dns01":
            records.append(
                _record("CNAME", CNAME_TTL, f"_acme-challenge.{name}", f"{name}.{ACME_DELEGATION_LABEL}.{base_domain}")
            )
    if not is_internal(name):
        records.append(_record("TXT", TXT_TTL, f"_cpln.{apex_of(name)}", org))
    return records


def _cname_hosts(name: str, spec: dict[str, Any]) -> list[str]:
    if spec.get("gvcLink"):
        return [f"*.{name}"]
    hosts = [name]
    if spec.get("acceptAllSubdomains"):
        hosts.append(f"*.{name}")
    return hosts
