"""The top-level fields of a cloud account (types-ts cloudaccount.ts): ``provider`` and ``data``.

``data``'s shape depends on ``provider``, so the schema takes any object and ``rules.py`` judges
it per provider, with every problem at its JSON path.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import WithJsonSchema

from plinth.kinds.spec_model import TopLevelModel

Provider = Literal["aws", "gcp", "azure", "ngs"]

DATA_SCHEMA = {
    "type": "object",
    "description": (
        "The provider's settings: aws {roleArn}; gcp {projectId} (numericProjectId accepted); "
        "azure {secretLink} to an azure-connector or azure-sdk secret; ngs {secretLink} to a nats-account secret."
    ),
}


class CloudAccountFields(TopLevelModel):
    """The top-level fields a client may send for a cloud account."""

    provider: Provider
    data: Annotated[Any, WithJsonSchema(DATA_SCHEMA)]
