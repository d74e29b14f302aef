"""A cloud account's ``data`` per provider, its secret link, and its status (types-ts cloudaccount.ts)."""

from __future__ import annotations

import re
from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext, Reference
from plinth.kinds.links import canonical_link, link_problem

ROLE_ARN = re.compile(r"^arn:(aws|aws-us-gov|aws-cn):iam::[0-9]+:role/.+$")
PROJECT_ID = re.compile(r"^[a-z]([a-z]|-|[0-9]){5,29}$")
SECRET = frozenset({"secret"})
#: The secret types each provider's ``secretLink`` may name.
SECRET_TYPES: dict[str, frozenset[str]] = {
    "azure": frozenset({"azure-connector", "azure-sdk"}),
    "ngs": frozenset({"nats-account"}),
}
#: The fields of ``data`` per provider, the required one first.
FIELDS: dict[str, tuple[str, ...]] = {
    "aws": ("roleArn",),
    "gcp": ("projectId", "numericProjectId"),
    "azure": ("secretLink",),
    "ngs": ("secretLink",),
}
#: Why no account is ever usable here (the status's ``lastError``).
NOT_CHECKED = "Plinth does not reach clouds: the account is stored, never checked"


def _data(item: Item) -> dict[str, Any]:
    data = item.get("data")
    return data if isinstance(data, dict) else {}


def cloudaccount_references(item: Item, org: str) -> list[Reference]:
    """An azure or ngs account's secret, which must exist (``cpln cloudaccount create-azure``
    creates it first)."""
    if item.get("provider") not in SECRET_TYPES:
        return []
    link = _data(item).get("secretLink")
    if not isinstance(link, str) or not link:
        return []
    return [Reference("data.secretLink", link, SECRET)]


def validate_cloudaccount(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """``data`` holds exactly the provider's fields, each of its shape."""
    provider = item.get("provider")
    if provider not in FIELDS:
        return []  # the schema already named it
    data = item.get("data")
    if not isinstance(data, dict):
        return [FieldError("data", f"must be an object with the {provider} account's settings")]
    errors = [
        FieldError(f"data.{key}", f"is not a setting of a {provider} account")
        for key in data
        if key not in FIELDS[provider]
    ]
    required = FIELDS[provider][0]
    value = data.get(required)
    if not isinstance(value, str) or not value:
        return [*errors, FieldError(f"data.{required}", "is required (a string)")]
    if provider == "aws" and not ROLE_ARN.fullmatch(value):
        errors.append(FieldError("data.roleArn", "must be a role ARN: arn:aws:iam::<account number>:role/<name>"))
    if provider == "gcp":
        if not PROJECT_ID.fullmatch(value):
            errors.append(
                FieldError(
                    "data.projectId", "must be a GCP project id: 6 to 30 of a-z, 0-9 and '-', starting with a letter"
                )
            )
        numeric = data.get("numericProjectId")
        if numeric is not None and not (isinstance(numeric, str) and numeric.isdigit()):
            errors.append(FieldError("data.numericProjectId", "must be a string of digits"))
    if provider in SECRET_TYPES:
        problem = link_problem(value, ctx.org, SECRET)
        if problem is not None:
            errors.append(FieldError("data.secretLink", problem))
    return errors


def validate_secret_type(item: Item, ctx: KindContext) -> list[FieldError]:
    """The linked secret is of a type the provider reads."""
    allowed = SECRET_TYPES.get(str(item.get("provider")))
    refs = cloudaccount_references(item, ctx.org)
    if allowed is None or not refs:
        return []
    secret = ctx.lookup(canonical_link(refs[0].link, ctx.org) or refs[0].link)
    if secret is None or secret.get("type") in allowed:
        return []
    wanted = " or ".join(sorted(allowed))
    return [FieldError("data.secretLink", f"must link to a secret of type {wanted}, not {secret.get('type')}")]


def cloudaccount_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    """Never usable: nothing here reaches the cloud to check the account."""
    return {"usable": False, "lastChecked": ctx.now, "lastError": NOT_CHECKED}
