"""User endpoints that are not plain verbs (types-ts user.ts): ``POST .../user/-invite`` and
``GET .../user/-for/email/{email}``. Both go through the engine, so the same rules, events
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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plinth.engine.access import Access, Unrestricted
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.errors import APIError, Conflict, FieldError, Forbidden, NotFound, ValidationFailed, not_found
from plinth.kinds.user import InviteRequest, user_name_rule
from plinth.kinds.validation import validate_model
from plinth.meta import parse_link


@dataclass
class Invitations:
    """``invitations``: email as sent -> the new user's link; ``errors``: email -> why not."""

    invitations: dict[str, str] = field(default_factory=dict)
    errors: dict[str, APIError] = field(default_factory=dict)

    def body(self, request_id: str) -> dict[str, Any]:
        """The wire shape ``{invitations, errors}``; each error is an ApiError body."""
        return {
            "invitations": self.invitations,
            "errors": {email: error.body(request_id) for email, error in self.errors.items()},
        }


def _users_of(engine: Engine, info: RequestInfo) -> str:
    """The org of a user collection path, or 404 for any other kind."""
    if engine.kind_of(info).name != "user" or info.org is None:
        raise NotFound(f"This action belongs to users, not to {info.kind}")
    return info.org


def _group_info(link: str | None, org: str) -> RequestInfo | None:
    if link is None:
        return None
    parsed = parse_link(link, org)
    if parsed is None or parsed.kind != "group" or parsed.org != org or parsed.gvc is not None:
        problem = f"must be a link to a group of org '{org}' (//group/<name>)"
        raise ValidationFailed([FieldError("groupLink", problem)], "user")
    return RequestInfo(kind="group", org=org, name=parsed.name)


async def invite(engine: Engine, info: RequestInfo, body: Any, access: Access) -> Invitations:
    """Invite users by email, optionally into a group (see the module docstring)."""
    org = _users_of(engine, info)
    fields, problems = validate_model(InviteRequest, body, "")
    if problems or fields is None:
        raise ValidationFailed(problems, "user")
    user_kind = engine.kind_of(info)
    collection = f"/org/{org}/user"
    # No item yet: stamp None keeps the decision out of the cache, and only target: all can cover it.
    if not access.allows(user_kind, "invite", collection, None, lambda: None):
        raise Forbidden(
            f"Permission 'invite' on the users of org '{org}' is needed",
            {"permission": "invite", "kind": "user", "link": collection},
        )
    group = _group_info(fields.get("groupLink"), org)

    result = Invitations()
    pending: dict[str, list[str]] = {}  # lowercased email -> the spellings sent
    for index, sent in enumerate(fields["emails"]):
        name = sent.lower()
        problem = user_name_rule(name)
        if problem is not None:
            result.errors[sent] = ValidationFailed([FieldError(f"emails[{index}]", problem)], "user", sent)
            continue
        if name not in pending and await engine.storage.get(engine.target(info, name).key) is not None:
            result.errors[sent] = Conflict(f"User '{name}' already exists", {"kind": "user", "name": name})
            continue
        pending.setdefault(name, []).append(sent)

    if group is not None and pending:
        await engine.patch(group, {"$append/memberLinks": [f"//user/{name}" for name in pending]}, access)
    on_behalf = Unrestricted(access.principal_link)
    for name, spellings in pending.items():
        try:
            created = await engine.create_for_action(
                RequestInfo(kind="user", org=org), {"name": name, "email": name}, on_behalf
            )
        except APIError as exc:  # lost a race with another invitation, or the org went away
            result.errors.update(dict.fromkeys(spellings, exc))
            continue
        result.invitations.update(dict.fromkeys(spellings, created.location or f"{collection}/{name}"))
    return result


async def for_email(engine: Engine, info: RequestInfo, email: str, access: Access) -> bytes:
    """The user with this email (any case), as a GET of the user would answer: 404 when there
    is none (or the address cannot name a user), 403 without ``view``."""
    org = _users_of(engine, info)
    name = email.lower()
    if user_name_rule(name) is not None:
        raise not_found("user", email)
    return await engine.get(RequestInfo(kind="user", org=org, name=name), access)
