"""The ``group`` kind (types-ts group.ts): users and service accounts that policies name together.

Top-level fields beyond the envelope:

- ``memberLinks``: at most 200 links to users (by email) and service accounts of this org.
  Stored lowercased (user emails), each member once (short and full forms of one link are
  the same member; the first stays), in full ``/org/...`` form (the engine normalises them).
- ``memberQuery``: a Query over users; it matches users only. Its ``kind`` is ``user``
  (filled in when left out, an error when it is anything else).
- ``identityMatcher``: ``{expression, language: jmespath|javascript}``, both required;
  the expression is 1 to 4096 characters (Plinth's bound; it is evaluated, not stored blind).
- ``origin`` (server-owned): ``default`` for groups clients create; ``builtin`` for the ones
  the server creates (``superusers``, ``viewers``); ``synthetic`` is reserved for groups the
  server derives. Clients never set it: it is dropped from every body, set to ``default`` on
  create and carried over on update. A built-in group cannot be deleted, but its members can
  be edited (docs.controlplane.com/reference/group); the engine enforces the delete rule.

Decisions where the sources are silent:

- Member links need not exist when the group is written: users are referenced by email before
  they accept their invitation, and the official CLI's ``cpln apply`` writes the items of one
  file in an order that may put a group before the service accounts it lists.
- The built-in ``superusers`` group must keep at least one member link: without one, nobody
  could manage the org.
- Deleting a member service account removes it from ``memberLinks`` (``forget``): an account
  made later under the same name is someone else and must not inherit the membership. The
  delete is refused when it would leave ``superusers`` without a member. User links stay:
  users are named by email, before they exist and after.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from pydantic import Field

from plinth.errors import FieldError
from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    Access,
    Item,
    KindContext,
    KindExample,
    KindSpec,
    Presentation,
    Reference,
    Rules,
    Schema,
)
from plinth.kinds.links import link_kind, link_problem, names_item, normalise_links
from plinth.kinds.query_model import Query
from plinth.kinds.spec_model import NonEmptyStr, SpecModel, TopLevelModel
from plinth.meta import parse_link

MEMBER_LINKS_MAX = 200
EXPRESSION_MAX = 4096
MEMBER_KINDS = frozenset({"user", "serviceaccount"})
SUPERUSERS = "superusers"


class IdentityMatcher(SpecModel):
    expression: Annotated[str, Field(min_length=1, max_length=EXPRESSION_MAX)]
    language: Literal["jmespath", "javascript"]


class GroupFields(TopLevelModel):
    """The top-level fields a client may send for a group."""

    memberLinks: Annotated[list[NonEmptyStr], Field(max_length=MEMBER_LINKS_MAX)] | None = None
    memberQuery: Query | None = None
    identityMatcher: IdentityMatcher | None = None


def prepare_group(item: Item, old: Item | None, ctx: KindContext) -> None:
    """``origin`` on create; member links lowercased and unique; ``memberQuery.kind`` filled."""
    item.setdefault("origin", "default")
    if "memberLinks" in item:
        item["memberLinks"] = normalise_links(item["memberLinks"], ctx.org)
    if "memberQuery" in item:
        item["memberQuery"] = {"kind": "user", **item["memberQuery"]}


def validate_group(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """Member links name users by email; the member query is over users; superusers keeps a member."""
    errors: list[FieldError] = []
    for index, link in enumerate(item.get("memberLinks", [])):
        problem = link_problem(link, ctx.org, MEMBER_KINDS)
        if problem is not None:
            errors.append(FieldError(f"memberLinks[{index}]", problem))
    query = item.get("memberQuery")
    if query is not None and query.get("kind") != "user":
        errors.append(FieldError("memberQuery.kind", "must be 'user' (a member query matches users only)"))
    if item.get("origin") == "builtin" and item["name"] == SUPERUSERS and not item.get("memberLinks"):
        errors.append(FieldError("memberLinks", f"the built-in group '{SUPERUSERS}' must keep at least one member"))
    return errors


def group_references(item: Item, org: str) -> list[Reference]:
    """Every member link, checked for its shape and org; none need exist (see the module docstring)."""
    return [
        Reference(f"memberLinks[{i}]", link, MEMBER_KINDS, must_exist=False)
        for i, link in enumerate(item.get("memberLinks", []))
    ]


def forget_member(item: Item, href: str, org: str) -> Item | None:
    """``item`` without the member service account at ``href`` (being deleted)."""
    if link_kind(href, org) != "serviceaccount":
        return None
    members = item.get("memberLinks", [])
    kept = [link for link in members if not names_item(link, href, org)]
    return {**item, "memberLinks": kept} if len(kept) != len(members) else None


def group_members(item: Item, org: str) -> frozenset[str]:
    """Member links (full form), and one token for ``memberQuery`` and one for
    ``identityMatcher``: a changed rule may match anyone, so it counts as a new member."""
    members = {parsed.href for link in item.get("memberLinks", []) if (parsed := parse_link(link, org)) is not None}
    for rule in ("memberQuery", "identityMatcher"):
        if item.get(rule) is not None:
            members.add(f"{rule}:{orjson.dumps(item[rule], option=orjson.OPT_SORT_KEYS).decode()}")
    return frozenset(members)


def group_member_query(item: Item, kind: str) -> Any:
    """``memberQuery`` admits users (``auth/policy.py`` matches it against users only)."""
    return item.get("memberQuery") if kind == "user" else None


GROUP = KindSpec(
    name="group",
    scope="org",
    schema=Schema(
        top_level_model=GroupFields,
        server_fields=frozenset({"origin"}),
    ),
    rules=Rules(
        prepare=prepare_group,
        validate=validate_group,
        references=group_references,
        forget=forget_member,
    ),
    access=Access(
        affects_access=True,
        members=group_members,
        member_query=group_member_query,
    ),
    presentation=Presentation(
        terraform_resource="cpln_group",
        text_columns=("NAME", "DESCRIPTION", "CREATED", "FILTER", "ORIGIN", "TAGS"),
        title="Group",
        query_properties=(*COMMON_QUERY_PROPERTIES, "origin"),
        template={"name": "", "description": "", "tags": {}, "memberLinks": []},
    ),
    example=KindExample(
        valid={"name": "grp{n}", "memberLinks": ["//serviceaccount/sa{n}"]},
        invalid=(
            ({"name": "grp{n}", "memberLinks": ["//gvc/g{n}"]}, "memberLinks[0]"),
            ({"name": "grp{n}", "memberLinks": ["/org/elsewhere/serviceaccount/sa{n}"]}, "memberLinks[0]"),
        ),
        update={"$append/memberLinks": ["//user/someone{n}@example.com"]},
        needs=(("/org/{org}/serviceaccount", {"name": "sa{n}"}),),
    ),
)
