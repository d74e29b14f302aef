"""What a workload's secret references name, and what its status says of them (docs.controlplane.com/reference/secret).

``cpln://secret/NAME`` names a whole secret, ``cpln://secret/NAME.KEY`` one of its properties,
in an env value or a volume URI. The write only checks the URI's shape: the secret may be
created later, and a workload reads it at run time. What does not hold yet is said in the
workload's ``status.warning``, one sentence per reference, refreshed when the secret is
created, changed or deleted (its status ``ReadsLinked`` ``secret``):

- the secret does not exist (yet);
- ``KEY`` is not a property of the secret's type. The properties are the fields of the type's
  ``data`` (types-ts secret.ts; docs.controlplane.com/reference/secret). Not judged: ``dictionary`` keys (they are
  part of the sealed values, which a status never opens) and the JSON-string types (``docker``, ``gcp``,
  ``azure-sdk``: which keys reach into them is unconfirmed);
- the workload has no identity, or its identity does not hold ``reveal`` on the secret under
  the org's policies (docs.controlplane.com/reference/secret: a workload reads secrets through its identity). The
  engine answers the :func:`reveal_questions` (``ctx.grants``) and refreshes the status when a
  policy that binds an identity changes.

The same sentences are the workload's runtime blockers (``ReadsRuntime.blockers``): until none is left, the runtime
reports it, and each of its deployments, not ready.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from plinth.kinds.base import GrantQuestion, Item, KindContext

SECRET_URI = "cpln://secret/"
#: The properties a ``NAME.KEY`` reference may name, by secret type (``None``: not judged).
SECRET_KEYS: dict[str, frozenset[str] | None] = {
    "opaque": frozenset({"payload"}),
    "userpass": frozenset({"username", "password"}),
    "tls": frozenset({"key", "cert", "chain"}),
    "aws": frozenset({"accessKey", "secretKey", "roleArn", "externalId"}),
    "ecr": frozenset({"accessKey", "secretKey", "roleArn", "externalId", "repos"}),
    "keypair": frozenset({"secretKey", "publicKey", "passphrase"}),
    "azure-connector": frozenset({"url", "code"}),
    "nats-account": frozenset({"accountId", "privateKey"}),
    "dictionary": None,
    "docker": None,
    "gcp": None,
    "azure-sdk": None,
}


def secret_uris(spec: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """``(JSON path, URI)`` of every secret URI in a workload spec's volumes and env values."""
    for i, container in enumerate(spec.get("containers") or []):
        where = f"spec.containers[{i}]"
        for j, volume in enumerate(container.get("volumes") or []):
            uri = volume.get("uri")
            if isinstance(uri, str) and uri.startswith(SECRET_URI):
                yield f"{where}.volumes[{j}].uri", uri
        for j, env in enumerate(container.get("env") or []):
            value = env.get("value")
            if isinstance(value, str) and value.startswith(SECRET_URI):
                yield f"{where}.env[{j}].value", value


def split_uri(uri: str) -> tuple[str, str | None]:
    """``cpln://secret/db.password`` -> ``("db", "password")`` (a secret's name has no dot)."""
    name, _, key = uri.removeprefix(SECRET_URI).partition(".")
    return name, key or None


def secret_href(uri: str, org: str) -> str:
    return f"/org/{org}/secret/{split_uri(uri)[0]}"


def reveal_questions(item: Item, org: str) -> tuple[GrantQuestion, ...]:
    """May the workload's identity ``reveal`` each secret it references? (none without identity)"""
    spec = item.get("spec") or {}
    identity = spec.get("identityLink")
    if not isinstance(identity, str) or not identity:
        return ()
    hrefs = sorted({secret_href(uri, org) for _, uri in secret_uris(spec)})
    return tuple(GrantQuestion(identity, "reveal", "secret", href) for href in hrefs)


def _reveal_problem(spec: dict[str, Any], name: str, href: str, ctx: KindContext) -> str | None:
    identity = spec.get("identityLink")
    if not isinstance(identity, str) or not identity:
        return f"the workload has no identity, so it cannot reveal secret '{name}' (link one that holds reveal on it)"
    granted = ctx.grants.get(GrantQuestion(identity, "reveal", "secret", href))
    if granted is False:  # None: not asked in this context
        who = identity.rsplit("/", 1)[-1]
        return f"identity '{who}' may not reveal secret '{name}' (grant it reveal on the secret with a policy)"
    return None


def workload_blockers(item: Item, ctx: KindContext) -> list[str]:
    """The workload's ``ReadsRuntime.blockers``: its secret references that do not hold now."""
    return secret_warnings(item.get("spec") or {}, ctx)


def secret_warnings(spec: dict[str, Any], ctx: KindContext) -> list[str]:
    """One sentence per secret reference that does not hold now."""
    out: list[str] = []
    for path, uri in secret_uris(spec):
        name, key = split_uri(uri)
        href = secret_href(uri, ctx.org)
        if href not in ctx.resolved:
            continue  # not looked up (a rule failed first): nothing to say
        secret: Item | None = ctx.resolved[href]
        if secret is None:
            out.append(f"{path}: secret '{name}' does not exist")
            continue
        kind = str(secret.get("type", ""))
        keys = SECRET_KEYS.get(kind)
        if key is not None and keys is not None and key not in keys:
            out.append(f"{path}: secret '{name}' ({kind}) has no key '{key}' (it has {', '.join(sorted(keys))})")
            continue
        problem = _reveal_problem(spec, name, href, ctx)
        if problem is not None:
            out.append(f"{path}: {problem}")
    return out
