"""The ``serviceaccount`` kind (docs.controlplane.com/reference/serviceaccount): a non-human principal that calls the
API with keys.

Beyond the envelope a service account has two server-owned top-level fields:

- ``keys``: the metadata of its keys, ``[{name, created, description}]``, in the order they
  were added. The secret ``key`` is returned once, by ``POST .../-addKey``, and never stored
  here or returned by a GET. A new service account has ``keys: []``. A client revokes keys
  with PATCH ``{"$drop/keys": ["<keyName>", ...]}``: ``droppable_server_lists`` lets that one
  directive through; any other client value for ``keys`` is ignored.
- ``origin``: ``default`` for service accounts clients create; ``builtin`` for the ones the
  server creates for itself. A built-in service account cannot be modified or deleted (the
  engine enforces that; the official platform's is ``controlplane``). Clients never set
  ``origin``: it is dropped from every body, set to ``default`` on create and carried over
  on update.

``AddKeyRequest`` is the body of ``-addKey``: ``{description}``, required, at most 250
characters (docs.controlplane.com/reference/serviceaccount), with no leading or trailing whitespace (the common
description rule).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, field_validator

from plinth.errors import ValidationFailed
from plinth.kinds.actions import ActionContext, Answer, ClosedAnswer
from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    Access,
    ActionCase,
    Item,
    KindAction,
    KindContext,
    KindExample,
    KindSpec,
    Presentation,
    Rules,
    Schema,
)
from plinth.kinds.permissions import declare_permissions
from plinth.kinds.spec_model import SpecModel
from plinth.kinds.validation import validate_model
from plinth.meta import DESCRIPTION_MAX

#: No leading or trailing whitespace, as a JSON Schema pattern.
TRIMMED_PATTERN = r"^(\S([\s\S]*\S)?)?$"


class AddKeyRequest(SpecModel):
    """The body of ``POST /org/{org}/serviceaccount/{name}/-addKey``."""

    # The pattern only documents the trim rule (the validator below enforces it, with its message).
    description: Annotated[
        str, Field(min_length=1, max_length=DESCRIPTION_MAX, json_schema_extra={"pattern": TRIMMED_PATTERN})
    ]

    @field_validator("description")
    @classmethod
    def _trimmed(cls, value: str) -> str:
        if value != value.strip():
            raise ValueError("must not start or end with whitespace")
        return value


class NewServiceAccountKey(ClosedAnswer):
    """The answer of ``-addKey``: the new key's entry in ``keys``, and the secret."""

    name: str = Field(description="The key's name, as the account's keys list it.")
    created: datetime
    description: str
    key: str = Field(description="The secret: answered here once, never stored or served again.")


async def add_key(ctx: ActionContext) -> Answer:
    """Mint a key for the service account (needs ``addKey`` on it). The secret is in this answer
    only; the account lists the key's name, creation time and description."""
    fields, errors = validate_model(AddKeyRequest, ctx.body, "")
    if errors or fields is None:
        raise ValidationFailed(errors, "serviceaccount", ctx.name)
    await ctx.item("addKey")
    name = ctx.new_key_name()
    entry = {"name": name, "created": ctx.now(), "description": fields["description"]}

    def keys_with_new(old: Item | None) -> dict[str, Any]:
        return {"keys": [*(old or {}).get("keys", []), entry]}

    # The addKey permission was checked above; the write itself is the server's, on the caller's behalf.
    await ctx.patch("serviceaccount", ctx.name or "", {}, on_behalf=True, system=keys_with_new)
    return Answer({**entry, "key": await ctx.mint_key(name)}, 201)


def prepare_serviceaccount(item: Item, old: Item | None, ctx: KindContext) -> None:
    """A new service account gets ``origin: default`` and no keys; an update keeps both."""
    item.setdefault("origin", "default")
    item.setdefault("keys", [])


SERVICEACCOUNT = KindSpec(
    name="serviceaccount",
    scope="org",
    schema=Schema(
        server_fields=frozenset({"keys", "origin"}),
        droppable_server_lists=frozenset({"keys"}),
    ),
    rules=Rules(
        prepare=prepare_serviceaccount,
    ),
    access=Access(
        affects_access=True,
        **declare_permissions(extra={"addKey": "Add a key to an existing service account"}),
    ),
    presentation=Presentation(
        terraform_resource="cpln_service_account",
        text_columns=("NAME", "DESCRIPTION", "CREATED", "ORIGIN", "KEYS", "TAGS"),
        title="ServiceAccount",
        query_properties=(*COMMON_QUERY_PROPERTIES, "origin"),
        short_names=("sa",),
        template={"name": "", "description": "", "tags": {}},
    ),
    actions=(
        KindAction(
            operation_id="addServiceaccountKey",
            method="POST",
            path="-addKey",
            summary="Add a key to a ServiceAccount; the answer holds the secret key, this once",
            handler=add_key,
            on_item=True,
            body=AddKeyRequest,
            status=201,
            answer=NewServiceAccountKey,
            examples=(
                ActionCase(201, body={"description": "ci key"}, has={"description": "ci key"}),
                ActionCase(400, body={"description": " padded"}),
                ActionCase(404, {"name": "no-such-account"}, body={"description": "ci"}),
            ),
        ),
    ),
    example=KindExample(
        valid={"name": "sa{n}", "description": "a robot"},
        invalid=(({"name": "sa{n}", "description": "x" * 251}, "description"), ({"name": "Sa{n}"}, "name")),
        update={"tags": {"team": "ci"}},
    ),
)
