"""The ``cloudaccount`` kind (docs.controlplane.com/reference/cloudaccount): the org's link to an account at a cloud
provider.

Top-level fields: ``provider`` (``aws``, ``gcp``, ``azure`` or ``ngs``; immutable: delete and
recreate, as the Terraform provider does) and ``data``, whose shape the provider decides
(``rules.py``): ``{roleArn}`` (``arn:aws:iam::<account>:role/<name>``), ``{projectId}`` (6-30 of
``[a-z0-9-]``, starting with a letter; the official CLI also sends ``numericProjectId``, kept
when given), or ``{secretLink}`` to a secret of the org. No ``spec``.

Decisions where the sources are silent:

- **The secret must exist**, and be of a type the provider reads: ``azure-connector`` or
  ``azure-sdk`` for azure, ``nats-account`` for ngs (a 400 at ``data.secretLink``). The official
  ``cpln cloudaccount create-azure`` creates the secret before the account, so it still works.
  Deleting the secret later is not refused (an account is never used here).
- **Status**: ``{usable: false, lastChecked: <time of the last write>, lastError: "Plinth does
  not reach clouds: ..."}``. Plinth never calls a cloud, so no account ever becomes usable, and
  saying so is more honest than a hopeful ``true``.
- ``GET .../cloudaccount/-instructions/{provider}`` answers ``{message, data: {cli: [...]}}``:
  the commands a user runs at the provider to let the org in (``cpln cloudaccount create-aws
  --how`` prints them). It needs no permission beyond being a member of the org: it names
  nothing but the org. An unknown provider is a 404.
- Identities keep checking their ``cloudAccountLink`` for shape only (kinds/identity).
"""

from __future__ import annotations

from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    Access,
    KindExample,
    KindSpec,
    Presentation,
    Rules,
    Schema,
    Status,
)
from plinth.kinds.cloudaccount.instructions import INSTRUCTIONS
from plinth.kinds.cloudaccount.models import CloudAccountFields
from plinth.kinds.cloudaccount.rules import (
    cloudaccount_references,
    cloudaccount_status,
    validate_cloudaccount,
    validate_secret_type,
)
from plinth.kinds.permissions import declare_permissions

CLOUDACCOUNT = KindSpec(
    name="cloudaccount",
    scope="org",
    schema=Schema(
        top_level_model=CloudAccountFields,
        immutable=("provider",),
    ),
    rules=Rules(
        validate=validate_cloudaccount,
        references=cloudaccount_references,
        validate_resolved=validate_secret_type,
    ),
    status=Status(
        compute=cloudaccount_status,
    ),
    access=Access(
        # Permissions: browse implies view, and edit implies it (docs.controlplane.com/reference/cloudaccount).
        **declare_permissions(
            extra={"browse": "Browse the cloud account's resources"},
            implied={"browse": ("view",), "edit": ("browse", "view")},
        ),
    ),
    presentation=Presentation(
        terraform_resource="cpln_cloud_account",
        text_columns=("NAME", "DESCRIPTION", "PROVIDER", "INFO", "CREATED", "TAGS"),
        title="CloudAccount",
        query_properties=(*COMMON_QUERY_PROPERTIES, "provider"),
        template={
            "name": "",
            "description": "",
            "tags": {},
            "provider": "aws",
            "data": {"roleArn": "arn:aws:iam::123456789012:role/cpln-{org}"},
        },
    ),
    actions=(INSTRUCTIONS,),
    example=KindExample(
        valid={
            "name": "aws{n}",
            "provider": "aws",
            "description": "Production AWS",
            "data": {"roleArn": "arn:aws:iam::123456789012:role/cpln-{org}"},
        },
        invalid=(
            ({"name": "aws{n}", "provider": "aws", "data": {"roleArn": "not-an-arn"}}, "data.roleArn"),
            ({"name": "aws{n}", "provider": "oracle", "data": {}}, "provider"),
            ({"name": "aws{n}", "provider": "gcp", "data": {"projectId": "X"}}, "data.projectId"),
            ({"name": "aws{n}", "provider": "ngs", "data": {"secretLink": "//secret/missing{n}"}}, "data.secretLink"),
            ({"name": "aws{n}", "provider": "aws", "data": {"roleArn": "arn:aws:iam::1:role/r", "x": 1}}, "data.x"),
        ),
        update={"description": "Production AWS (main)", "tags": {"team": "platform"}},
    ),
)
