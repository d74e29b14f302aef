"""``GET /org/{org}/cloudaccount/-instructions/{provider}``: how to let the org into an account.

The answer is ``{message, data: {cli: [...]}}`` (CLI commands/cloudaccount.js): what ``cpln cloudaccount
create-aws --how`` (and ``create-gcp --how``) prints, the message and then each command. The
commands name the org (the AWS role ``cpln-{org}``, the GCP service account
``cpln-{org}@cpln-prod01.iam.gserviceaccount.com``, the roles the official CLI lists, CLI commands/cloudaccount.js);
they are what a user would run at the hosted platform. The action, its handler and its answer's
model are declared here (``INSTRUCTIONS``). Plinth never uses the account (its status says
so), so the message says that too.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from plinth.errors import NotFound
from plinth.kinds.actions import ActionContext, Answer, ClosedAnswer
from plinth.kinds.base import ActionCase, KindAction

NOTE = "Plinth stores the cloud account but never reaches the cloud: its status stays usable: false."
GCP_ROLES = ("roles/viewer", "roles/iam.serviceAccountAdmin", "roles/iam.serviceAccountTokenCreator")


def _aws(org: str) -> dict[str, Any]:
    role = f"cpln-{org}"
    trust = (
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":'
        '"arn:aws:iam::CPLN_AWS_ACCOUNT_ID:root"},"Action":"sts:AssumeRole",'
        f'"Condition":{{"StringEquals":{{"sts:ExternalId":"{org}"}}}}}}]}}'
    )
    return {
        "message": (
            f"Create the IAM role '{role}' that Control Plane assumes (CPLN_AWS_ACCOUNT_ID is the platform's AWS "
            "account, which Plinth does not know), attach the policies it needs, then run "
            f"`cpln cloudaccount create-aws --name NAME --role-arn arn:aws:iam::<account number>:role/{role}`. {NOTE}"
        ),
        "data": {
            "cli": [
                f"aws iam create-role --role-name {role} --assume-role-policy-document '{trust}'",
                f"aws iam attach-role-policy --role-name {role} --policy-arn arn:aws:iam::aws:policy/ReadOnlyAccess",
                f"aws iam attach-role-policy --role-name {role} --policy-arn arn:aws:iam::aws:policy/IAMFullAccess",
                f"aws iam get-role --role-name {role} --query Role.Arn --output text",
            ]
        },
    }


def _gcp(org: str) -> dict[str, Any]:
    account = f"cpln-{org}@cpln-prod01.iam.gserviceaccount.com"
    grants = [
        f"gcloud projects add-iam-policy-binding PROJECT_ID --member serviceAccount:{account} --role {role}"
        for role in GCP_ROLES
    ]
    return {
        "message": (
            f"Grant the service account '{account}' these roles in the project, then run "
            f"`cpln cloudaccount create-gcp --name NAME --project-id PROJECT_ID`. {NOTE}"
        ),
        "data": {"cli": grants},
    }


def _azure(org: str) -> dict[str, Any]:
    return {
        "message": (
            "Deploy the Control Plane connector function app in your Azure subscription, then run "
            "`cpln cloudaccount create-azure --name NAME --secret SECRET --url FUNCTION_URL --code FUNCTION_CODE`, "
            f"which stores the URL and code in an azure-connector secret of org '{org}'. {NOTE}"
        ),
        "data": {
            "cli": [
                "az login",
                f"az group create --name cpln-{org} --location eastus",
                f"az functionapp list --resource-group cpln-{org} --query '[].defaultHostName' --output tsv",
            ]
        },
    }


def _ngs(org: str) -> dict[str, Any]:
    return {
        "message": (
            "Create a nats-account secret with the NGS account's private key, then run "
            f"`cpln cloudaccount create-ngs --name NAME --secret SECRET` in org '{org}'. {NOTE}"
        ),
        "data": {"cli": [f"cpln secret create-nats --name ngs-account --org {org} --account-id ID --private-key KEY"]},
    }


PROVIDERS = {"aws": _aws, "gcp": _gcp, "azure": _azure, "ngs": _ngs}


def instructions(org: str, provider: str) -> dict[str, Any]:
    """The instructions for ``provider``; 404 for a provider cloud accounts do not have."""
    make = PROVIDERS.get(provider)
    if make is None:
        raise NotFound(f"Cloud accounts have no provider '{provider}' (aws, gcp, azure or ngs)", {"provider": provider})
    return make(org)


class InstructionsData(ClosedAnswer):
    cli: list[str] = Field(description="The commands, in order.")


class Instructions(ClosedAnswer):
    """How to let the org into a cloud account."""

    message: str = Field(description="What to do, in words.")
    data: InstructionsData


async def serve_instructions(ctx: ActionContext) -> Answer:
    """The instructions for the path's ``{provider}``; no permission beyond the org's."""
    return Answer(instructions(ctx.org, ctx.params["provider"]))


INSTRUCTIONS = KindAction(
    operation_id="getCloudaccountInstructions",
    method="GET",
    path="-instructions/{provider}",
    summary="How to let the org into an account at the provider (aws, gcp, azure or ngs): the commands to run",
    handler=serve_instructions,
    answer=Instructions,
    examples=(ActionCase(200, {"provider": "aws"}), ActionCase(404, {"provider": "oracle"})),
)
