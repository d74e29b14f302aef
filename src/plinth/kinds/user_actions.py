"""A user's endpoints that are not plain verbs (types-ts user.ts): ``POST .../user/-invite`` and
``GET .../user/-for/email/{email}``, declared with the ``user`` kind (``user.py``). Both go
through the engine (:class:`~plinth.kinds.actions.ActionContext`), so the same rules, events
and access generation apply as for any other write or read.

Invitations:

- The caller needs ``invite`` on the org's user collection (``/org/{org}/user``): the users do
  not exist yet, so only a user policy with ``target: all`` can grant it (a ``targetLinks`` or
  ``targetQuery`` policy covers existing users). Without it the whole request is a 403.
- With a ``groupLink``, the caller also needs ``edit`` on that group (otherwise ``invite``
  would let it put anyone into ``superusers``). The group is extended first, in one PATCH,
  with the caller's own access: a missing group or permission fails the whole request before
  any user is created. Group members may name users who do not exist yet (``group.py``).
- Each email is then judged on its own: an invalid address (400) or an existing user (409) is
  an entry in ``errors``, never a failure of the request. Emails are lowercased (a user's name
  is its email in lowercase); spellings of one address share one invitation. Each new user is
  created on the caller's behalf (``invite`` stands for the ``create`` users do not have), with
  ``name`` and ``email`` set and ``idp`` unset, and the event records the caller.
- ``invitations`` maps each email as sent to the new user's link.

``InviteRequest`` is the body of ``-invite``: ``{emails, groupLink?}``, 1 to 100 emails (Plinth's
bound). Each email is judged on its own by the action (an invalid one is an entry in the
answer's ``errors``), so the model only asks for strings here.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from plinth.errors import APIError, Conflict, FieldError, Forbidden, ValidationFailed, not_found
from plinth.kinds.actions import ActionContext, Answer, ClosedAnswer, component
from plinth.kinds.base import ActionCase, KindAction
from plinth.kinds.links import user_name_problem
from plinth.kinds.spec_model import NonEmptyStr, SpecModel
from plinth.kinds.validation import validate_model
from plinth.meta import parse_link

INVITE_EMAILS_MAX = 100


class InviteRequest(SpecModel):
    """The body of ``POST /org/{org}/user/-invite``."""

    emails: Annotated[list[str], Field(min_length=1, max_length=INVITE_EMAILS_MAX)]
    groupLink: NonEmptyStr | None = None


class Invitations(ClosedAnswer):
    """The answer of ``-invite``: each email succeeds or fails on its own."""

    invitations: dict[str, str] = Field(description="Each email as sent -> the link of the new user.")
    errors: Annotated[
        dict[str, Any], WithJsonSchema({"type": "object", "additionalProperties": component("Error")})
    ] = Field(description="Each email as sent -> why it was not invited (400 invalid, 409 exists, ...).")


def _group_name(link: str | None, org: str) -> str | None:
    if link is None:
        return None
    parsed = parse_link(link, org)
    if parsed is None or parsed.kind != "group" or parsed.org != org or parsed.gvc is not None:
        problem = f"must be a link to a group of org '{org}' (//group/<name>)"
        raise ValidationFailed([FieldError("groupLink", problem)], "user")
    return parsed.name


async def invite(ctx: ActionContext) -> Answer:
    """Invite users by email, optionally into a group (see the module docstring)."""
    org = ctx.org
    fields, problems = validate_model(InviteRequest, ctx.body, "")
    if problems or fields is None:
        raise ValidationFailed(problems, "user")
    collection = f"/org/{org}/user"
    if not ctx.allows("invite", collection):
        raise Forbidden(
            f"Permission 'invite' on the users of org '{org}' is needed",
            {"permission": "invite", "kind": "user", "link": collection},
        )
    group = _group_name(fields.get("groupLink"), org)

    invitations: dict[str, str] = {}
    errors: dict[str, APIError] = {}
    pending: dict[str, list[str]] = {}  # lowercased email -> the spellings sent
    for index, sent in enumerate(fields["emails"]):
        name = sent.lower()
        problem = user_name_problem(name)
        if problem is not None:
            errors[sent] = ValidationFailed([FieldError(f"emails[{index}]", problem)], "user", sent)
            continue
        if name not in pending and await ctx.exists("user", name):
            errors[sent] = Conflict(f"User '{name}' already exists", {"kind": "user", "name": name})
            continue
        pending.setdefault(name, []).append(sent)

    if group is not None and pending:
        await ctx.patch("group", group, {"$append/memberLinks": [f"//user/{name}" for name in pending]})
    for name, spellings in pending.items():
        try:
            link = await ctx.create_on_behalf("user", {"name": name, "email": name})
        except APIError as exc:  # lost a race with another invitation, or the org went away
            errors.update(dict.fromkeys(spellings, exc))
            continue
        invitations.update(dict.fromkeys(spellings, link))
    body = {
        "invitations": invitations,
        "errors": {email: error.body(ctx.request_id) for email, error in errors.items()},
    }
    return Answer(body)


async def for_email(ctx: ActionContext) -> Answer:
    """The user with this email (any case), as a GET of the user would answer: 404 when there
    is none (or the address cannot name a user), 403 without ``view``."""
    email = ctx.params["email"]
    name = email.lower()
    if user_name_problem(name) is not None:
        raise not_found("user", email)
    return Answer(await ctx.get("user", name))


ACTIONS = (
    KindAction(
        operation_id="inviteUsers",
        method="POST",
        path="-invite",
        summary="Invite users by email, optionally into a group; each email succeeds or fails on its own",
        handler=invite,
        body=InviteRequest,
        answer=Invitations,
        examples=(
            # Users arrive only by invitation: this one is the user getUserForEmail's example finds
            # (a kind's examples run in declaration order).
            ActionCase(200, body={"emails": ["{NAME}"]}, has={"invitations": {"{NAME}": "/org/{org}/user/{name}"}}),
            ActionCase(200, body={"emails": ["{name}"]}, has={"errors": {"{name}": {"code": "conflict"}}}),
            ActionCase(400, body={"emails": []}),
            ActionCase(200, body={"emails": ["not-an-email"]}, has={"errors": {"not-an-email": {"status": 400}}}),
        ),
    ),
    KindAction(
        operation_id="getUserForEmail",
        method="GET",
        path="-for/email/{email}",
        summary="The User with this email (any case)",
        handler=for_email,
        examples=(
            ActionCase(200, {"email": "{NAME}"}, has={"name": "{name}"}),
            ActionCase(404, {"email": "nobody@example.com"}),
        ),
    ),
)
