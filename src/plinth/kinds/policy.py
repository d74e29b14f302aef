"""The ``policy`` kind (docs.controlplane.com/reference/policy): permissions on items of one kind, granted to
principals.

Top-level fields beyond the envelope:

- ``targetKind`` (required): a kind a policy may target (``plinth.kinds.PERMISSIONS``).
- The target, in one of three modes:

  - ``target: all``: every item of ``targetKind`` in the org, now and later. ``targetLinks``
    may come along only empty (the official CLI sends ``targetLinks: []`` with it);
  - ``targetLinks``: at most 200 links to items of ``targetKind`` in this org. They need not
    exist (a policy may be written before what it covers, and an item deleted later simply
    stops matching); links to GVC-scoped kinds name their GVC. Each item is kept once;
  - ``targetQuery``: a Query over ``targetKind``, evaluated live by the authorizer. Its
    ``kind`` is ``targetKind`` (filled in when left out, an error when different).

  Naming two modes is an error on the path of the second (``targetLinks`` with
  ``target: all``, ``targetQuery`` with either other mode). A policy with no target at all
  is valid and covers nothing, so a policy can be built up in steps.
- ``bindings``: at most 50, each ``{permissions, principalLinks}``: one or more permissions,
  each one of ``targetKind``'s (an unknown name is an error at its path, e.g.
  ``bindings[1].permissions[0]``, because a misspelt permission would otherwise grant
  nothing, silently); 1 to 200 principal links to users (by email), service accounts,
  groups or GVC identities (``//gvc/{gvc}/identity/{name}``), well-formed and of this org.
  None need exist yet: the official CLI's ``cpln apply`` writes policies before the groups and
  service accounts of the same file, so a policy must be writable before the principals it
  names (a binding to a principal that does not exist grants nothing). Each is kept once per binding, so
  a client that resends what a policy holds is not refused; an index in an error path
  counts the stored (repeat-free) entries, and the message quotes the offending value.
- ``origin`` (server-owned): ``default`` for policies clients create; ``builtin`` for the
  server's own ``superusers-{kind}`` and ``viewers-{kind}``, which target all items and which
  no client may create, edit or delete (the engine enforces that). Clients never set
  ``origin``: it is dropped from every body, set to ``default`` on create, carried on update.

Deleting a service account, group or identity removes its principal links (``forget``), and a
binding left with none goes with them: an account, group or identity made later under the same
name must not inherit the grants. Target links and user links stay (they need not exist).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from pydantic import Field, field_validator

from plinth.errors import FieldError
from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    Access,
    Conferred,
    GrantTargets,
    Item,
    KindContext,
    KindExample,
    KindSpec,
    Lifecycle,
    Presentation,
    Reference,
    Rules,
    Schema,
)
from plinth.kinds.links import link_kind, link_problem, names_item, normalise_links
from plinth.kinds.permissions import implied_closure, target_permissions
from plinth.kinds.query_model import Query
from plinth.kinds.spec_model import NonEmptyStr, SpecModel, TopLevelModel
from plinth.meta import parse_link

TARGET_LINKS_MAX = 200
BINDINGS_MAX = 50
PRINCIPAL_LINKS_MAX = 200
PRINCIPAL_KINDS = frozenset({"user", "serviceaccount", "group", "identity"})


class Binding(SpecModel):
    permissions: Annotated[list[NonEmptyStr], Field(min_length=1)]
    principalLinks: Annotated[list[NonEmptyStr], Field(min_length=1, max_length=PRINCIPAL_LINKS_MAX)]


class PolicyFields(TopLevelModel):
    """The top-level fields a client may send for a policy."""

    targetKind: str
    targetLinks: Annotated[list[NonEmptyStr], Field(max_length=TARGET_LINKS_MAX)] | None = None
    targetQuery: Query | None = None
    target: Literal["all"] | None = None
    bindings: Annotated[list[Binding], Field(max_length=BINDINGS_MAX)] | None = None

    @field_validator("targetKind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        targets = target_permissions()
        if value not in targets:
            raise ValueError(f"must be one of {', '.join(sorted(targets))}")
        return value


def prepare_policy(item: Item, old: Item | None, ctx: KindContext) -> None:
    """``origin`` on create; links and permissions kept once; ``targetQuery.kind`` filled."""
    item.setdefault("origin", "default")
    if "targetLinks" in item:
        item["targetLinks"] = normalise_links(item["targetLinks"], ctx.org)
    if "targetQuery" in item:
        item["targetQuery"] = {"kind": item["targetKind"], **item["targetQuery"]}
    for binding in item.get("bindings", []):
        binding["permissions"] = list(dict.fromkeys(binding["permissions"]))
        binding["principalLinks"] = normalise_links(binding["principalLinks"], ctx.org)


def _target_errors(item: Item, org: str) -> list[FieldError]:
    kind = item["targetKind"]
    links = item.get("targetLinks", [])
    errors: list[FieldError] = []
    if item.get("target") == "all":
        if links:
            errors.append(FieldError("targetLinks", "must be empty when target is 'all'"))
        if "targetQuery" in item:
            errors.append(FieldError("targetQuery", "cannot be combined with target 'all'"))
    elif links and "targetQuery" in item:
        errors.append(FieldError("targetQuery", "cannot be combined with targetLinks"))
    query = item.get("targetQuery")
    if query is not None and query["kind"] != kind:
        errors.append(FieldError("targetQuery.kind", f"must be '{kind}', the policy's targetKind"))
    for index, link in enumerate(links):
        problem = link_problem(link, org, {kind})
        if problem is not None:
            errors.append(FieldError(f"targetLinks[{index}]", problem))
    return errors


def _binding_errors(binding: dict[str, Any], path: str, kind: str, org: str) -> list[FieldError]:
    allowed = target_permissions()[kind].permissions
    errors = [
        FieldError(f"{path}.permissions[{index}]", f"'{name}' is not a {kind} permission; use {', '.join(allowed)}")
        for index, name in enumerate(binding["permissions"])
        if name not in allowed
    ]
    for index, link in enumerate(binding["principalLinks"]):
        problem = link_problem(link, org, PRINCIPAL_KINDS)
        if problem is not None:
            errors.append(FieldError(f"{path}.principalLinks[{index}]", problem))
    return errors


def validate_policy(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """One target mode; links of the right shape; every permission one of ``targetKind``'s."""
    errors = _target_errors(item, ctx.org)
    for index, binding in enumerate(item.get("bindings", [])):
        errors += _binding_errors(binding, f"bindings[{index}]", item["targetKind"], ctx.org)
    return errors


def policy_references(item: Item, org: str) -> list[Reference]:
    """Target links (of ``targetKind``) and every binding's principal links; none need exist."""
    refs = [
        Reference(f"targetLinks[{i}]", link, frozenset({item["targetKind"]}), must_exist=False)
        for i, link in enumerate(item.get("targetLinks", []))
    ]
    for b, binding in enumerate(item.get("bindings", [])):
        refs += [
            Reference(f"bindings[{b}].principalLinks[{i}]", link, PRINCIPAL_KINDS, must_exist=False)
            for i, link in enumerate(binding["principalLinks"])
        ]
    return refs


def policy_confers(item: Item, org: str) -> frozenset[Conferred]:
    """Every (principal, permission) a binding grants, implications followed, on the policy's
    target; nothing for a policy without a target (it covers nothing)."""
    kind = str(item.get("targetKind"))
    if kind not in target_permissions():
        return frozenset()
    targets: list[tuple[str, ...]]
    if item.get("target") == "all":
        targets = [("all",)]
    elif item.get("targetQuery") is not None:
        targets = [("query", orjson.dumps(item["targetQuery"], option=orjson.OPT_SORT_KEYS).decode())]
    else:
        targets = [("link", href) for href in (_href(link, org) for link in item.get("targetLinks", [])) if href]
    out: set[Conferred] = set()
    for binding in item.get("bindings", []):
        permissions = implied_closure(kind, binding.get("permissions", []))
        for principal in (_href(link, org) for link in binding.get("principalLinks", [])):
            if principal is not None:
                out.update(Conferred(principal, p, kind, target) for p in permissions for target in targets)
    return frozenset(out)


def _href(link: str, org: str) -> str | None:
    parsed = parse_link(link, org)
    return parsed.href if parsed is not None and parsed.org == org else None


#: Principals named by links that die with them: a later account, group or identity of the same
#: name is someone else. (Users are named by email, before they exist and after, so their links stay.)
FORGOTTEN_PRINCIPALS = frozenset({"serviceaccount", "group", "identity"})


def forget_principal(item: Item, href: str, org: str) -> Item | None:
    """``item`` without the principal links to ``href`` (a service account, group or identity being deleted)."""
    if link_kind(href, org) not in FORGOTTEN_PRINCIPALS:
        return None
    bindings: list[dict[str, Any]] = []
    changed = False
    for binding in item.get("bindings", []):
        kept = [link for link in binding["principalLinks"] if not names_item(link, href, org)]
        changed = changed or len(kept) != len(binding["principalLinks"])
        if kept:
            bindings.append({**binding, "principalLinks": kept})
    return {**item, "bindings": bindings} if changed else None


#: What a principal link to an identity holds: only grants to identities feed statuses.
IDENTITY_SEGMENT = "/identity/"


def policy_grant_targets(item: Item, org: str) -> GrantTargets:
    """What this policy grants on: its targets (every item of its ``targetKind`` for ``target:
    all`` or a ``targetQuery``), and whether it binds an identity (only an identity's grants
    are asked by statuses: a workload's secrets)."""
    principals = [link for b in item.get("bindings") or [] for link in b.get("principalLinks") or []]
    identities = tuple(link for link in principals if IDENTITY_SEGMENT in link)
    hrefs = []
    for link in item.get("targetLinks") or []:
        parsed = parse_link(link, org)
        if parsed is not None and parsed.org == org:
            hrefs.append(parsed.href)
    every = item.get("target") == "all" or item.get("targetQuery") is not None
    return GrantTargets(str(item.get("targetKind", "")), every, tuple(hrefs), bool(identities), identities)


POLICY = KindSpec(
    name="policy",
    scope="org",
    schema=Schema(
        top_level_model=PolicyFields,
        server_fields=frozenset({"origin"}),
    ),
    rules=Rules(
        prepare=prepare_policy,
        validate=validate_policy,
        references=policy_references,
        forget=forget_principal,
    ),
    lifecycle=Lifecycle(
        builtin_is_read_only=True,
    ),
    access=Access(
        affects_access=True,
        confers=policy_confers,
        grant_targets=policy_grant_targets,
    ),
    presentation=Presentation(
        terraform_resource="cpln_policy",
        text_columns=("NAME", "DESCRIPTION", "CREATED", "TARGET KIND", "MATCHES", "ORIGIN", "TAGS"),
        title="Policy",
        query_properties=(*COMMON_QUERY_PROPERTIES, "origin", "targetKind"),
        template={
            "name": "",
            "description": "",
            "tags": {},
            "targetKind": "gvc",
            "targetLinks": [],
            "bindings": [{"permissions": ["view"], "principalLinks": ["//group/viewers"]}],
        },
    ),
    example=KindExample(
        valid={
            "name": "pol{n}",
            "targetKind": "gvc",
            "target": "all",
            "bindings": [{"permissions": ["view"], "principalLinks": ["//serviceaccount/sa{n}"]}],
        },
        invalid=(
            ({"name": "pol{n}", "targetKind": "spaceship"}, "targetKind"),
            (
                {
                    "name": "pol{n}",
                    "targetKind": "gvc",
                    "bindings": [{"permissions": ["fly"], "principalLinks": ["//serviceaccount/sa{n}"]}],
                },
                "bindings[0].permissions[0]",
            ),
        ),
        update={"bindings": [{"permissions": ["edit"], "principalLinks": ["//serviceaccount/sa{n}"]}]},
        needs=(("/org/{org}/serviceaccount", {"name": "sa{n}"}),),
    ),
)
