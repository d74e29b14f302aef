"""The ``user`` kind (types-ts user.ts): a person who belongs to an org and signs in through an IdP.

A user's ``name`` is its email address, in lowercase. The official CLI builds member and
principal links from the email (``/org/{org}/user/{email}``), so making the email the name
makes those links item paths: ``/org/acme/user/ada@example.com`` is both what a group lists
and where the user is read. The name rule is therefore an email rule (at most 254
characters, at most 64 before the ``@``, lowercase, not starting with ``-``), and the
top-level ``email`` must equal the name: it is required and cannot change, since the name
cannot. Links by user id (which the official API also accepts) are not accepted.

Decisions where the sources are silent:

- Users have no ``description`` (types-ts user.ts) and no ``spec``; they carry ``tags``, ``email`` and
  ``idp``. ``idp`` (the identity provider the user signs in with, e.g. ``google.com``) is a
  client-settable optional string of 1 to 250 characters.
- Users join by invitation (``POST .../user/-invite``), never by POST on the collection, so
  ``create`` is not a verb. Neither is ``replace``: the engine's PUT creates a missing item,
  which would let a PUT add a user without an invitation. ``get``, ``list``, ``patch`` (the
  CLI's ``edit``) and ``delete`` remain.
- Permissions follow the vendor's table: ``delete, edit, impersonate, invite, manage, view``;
  there is no ``create`` permission (``invite`` is what adds users).
- ``description`` cannot be queried (users have none); ``email`` and ``idp`` can.

Its actions (``-invite``, ``-for/email/{email}``) and their bodies and answers are declared in
``user_actions.py``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from plinth.errors import FieldError
from plinth.kinds.base import Access, Item, KindContext, KindSpec, Presentation, Rules, Schema
from plinth.kinds.links import user_name_problem
from plinth.kinds.permissions import declare_permissions
from plinth.kinds.spec_model import TopLevelModel
from plinth.kinds.user_actions import ACTIONS

IDP_MAX = 250


def _check_user_email(value: str) -> str:
    problem = user_name_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


UserEmail = Annotated[str, AfterValidator(_check_user_email)]


class UserFields(TopLevelModel):
    """The top-level fields a client may send for a user."""

    email: UserEmail
    idp: Annotated[str, Field(min_length=1, max_length=IDP_MAX)] | None = None


def user_name_rule(name: str) -> str | None:
    """A user's name is its email address, in lowercase."""
    return user_name_problem(name)


def validate_user(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """``email`` equals the name (so it is also immutable)."""
    if item["email"] != item["name"]:
        return [FieldError("email", f"must be the user's name, '{item['name']}'")]
    return []


USER = KindSpec(
    name="user",
    scope="org",
    schema=Schema(
        top_level_model=UserFields,
        has_description=False,
        name_rule=user_name_rule,
    ),
    rules=Rules(
        validate=validate_user,
    ),
    access=Access(
        affects_access=True,
        # Permissions: Users join by invitation: no create.
        **declare_permissions(
            extra={"impersonate": "Act as the user", "invite": "Invite users to the org"},
            without=("create",),
        ),
        verbs=frozenset({"get", "list", "patch", "delete"}),
    ),
    presentation=Presentation(
        terraform_resource=None,
        text_columns=("ID", "FULL NAME", "EMAIL", "CREATED", "IDP", "TAGS"),
        title="User",
        query_properties=("id", "name", "version", "created", "lastModified", "email", "idp"),
    ),
    actions=ACTIONS,
)
