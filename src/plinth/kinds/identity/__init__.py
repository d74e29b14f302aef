"""The ``identity`` kind (docs.controlplane.com/reference/identity): what a workload of one GVC acts as towards cloud
providers, NATS and private network resources.

An identity has no ``spec``: its blocks are top-level fields, all optional (an identity made by
``cpln identity create`` has none): ``aws``, ``gcp``, ``azure`` and ``ngs`` (one access policy
per provider, each naming a cloud account), ``networkResources`` and ``nativeNetworkResources``
(at most 50 each), ``memcacheAccess`` and ``spicedbAccess``. A body's ``gvc`` is the path's GVC
or ignored, as for every GVC-scoped kind. A workload names its identity in
``spec.identityLink``; the identity must exist in the workload's GVC, and deleting an identity
a workload uses is a 409 naming the workloads (``workload.protects``).

Package layout: ``models`` (the schema and the one-object shape rules), ``rules`` (the
cross-field rules), ``links`` (the links it holds), ``status`` (the computed status).

Decisions where the sources are silent or disagree (docs.controlplane.com/reference/identity; docs/api.md, Identities):

- Links to cloud accounts, agents and clusters need not exist (those kinds are not served):
  they are checked for shape, org and kind, and stored in their full ``/org/...`` form.
  Whether a cloud account's provider matches the block naming it, and whether the agents of
  the network resources share a protocol version, cannot be checked and are not.
- ``aws.policyRefs`` take any non-empty string, full ARNs included (``aws::arn:...`` as the
  vendor's docs show, where its runbook says never to): Plinth does not resolve them.
- ``azure.roleAssignments`` is required, with at least one entry (the docs), where the
  generated types leave it optional: an Azure block granting nothing would be a mistake.
- Defaults are filled inside blocks sent: ``gcp.scopes`` (cloud-platform), ``ngs`` limits
  ``subs``, ``data``, ``payload`` (-1, unlimited), ``ngs.resp.max`` (1) and
  ``aws.trustPolicy.Version`` (2012-10-17). ``ngs.resp.ttl`` also takes ``-1`` (no deadline),
  as the Terraform provider documents.
- The ``use`` permission is granted and reported like any other, but linking a workload to an
  identity is judged on the workload's own permissions only.
"""

from __future__ import annotations

from plinth.errors import FieldError
from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    Access,
    Item,
    KindContext,
    KindExample,
    KindSpec,
    Presentation,
    Rules,
    Schema,
    Status,
)
from plinth.kinds.identity.links import PROVIDERS, identity_references, link_errors
from plinth.kinds.identity.models import IdentityFields
from plinth.kinds.identity.rules import validate_identity
from plinth.kinds.identity.status import compute_identity_status
from plinth.kinds.permissions import declare_permissions


def validate(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """The cross-field rules (``rules``) and the links' GVC segments (``links``)."""
    return validate_identity(item, old, ctx) + link_errors(item, ctx.org)


IDENTITY = KindSpec(
    name="identity",
    scope="gvc",
    schema=Schema(
        top_level_model=IdentityFields,
    ),
    rules=Rules(
        validate=validate,
        references=identity_references,
    ),
    status=Status(
        compute=compute_identity_status,
    ),
    access=Access(
        **declare_permissions(extra={"use": "Link the identity to workloads"}),
    ),
    presentation=Presentation(
        terraform_resource="cpln_identity",
        text_columns=("NAME", "DESCRIPTION", "GVC", "LOCAL NAME", "CREATED", "PROVIDERS", "TAGS"),
        title="Identity",
        query_properties=(
            *COMMON_QUERY_PROPERTIES,
            "gvc",
            *(f"{provider}.cloudAccountLink" for provider in PROVIDERS),
        ),
        short_names=("id",),
        template={
            "name": "",
            "description": "",
            "tags": {},
            "networkResources": [{"name": "db", "FQDN": "db.example.com", "ports": [5432]}],
        },
    ),
    example=KindExample(
        valid={
            "name": "id{n}",
            "aws": {"cloudAccountLink": "//cloudaccount/aws{n}", "policyRefs": ["aws::AmazonS3ReadOnlyAccess"]},
            "networkResources": [{"name": "db", "FQDN": "db.example.com", "ports": [5432]}],
        },
        invalid=(
            (
                {"name": "id{n}", "aws": {"cloudAccountLink": "//cloudaccount/a", "roleName": "no spaces"}},
                "aws.roleName",
            ),
            (
                {
                    "name": "id{n}",
                    "networkResources": [
                        {"name": "db", "FQDN": "db.example.com", "ports": [5432]},
                        {"name": "db", "IPs": ["10.0.0.7"], "ports": [5432]},
                    ],
                },
                "networkResources[1].name",
            ),
            ({"name": "id{n}", "ngs": {"cloudAccountLink": "//gvc/g{n}/cloudaccount/nats"}}, "ngs.cloudAccountLink"),
        ),
        update={"$replace/aws": {"cloudAccountLink": "//cloudaccount/aws{n}", "roleName": "reader-{n}"}},
        needs=(("/org/{org}/gvc", {"name": "g{n}"}),),
        gvc="g{n}",
    ),
)
