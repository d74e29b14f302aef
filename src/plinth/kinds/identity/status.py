"""An identity's status (computed, never sent; types-ts identity.ts: ``{objectName, aws, gcp, azure}``).

- ``objectName``: the name the identity's cloud objects would carry (the CLI's LOCAL NAME
  column). The platform's naming is not documented; Plinth derives 13 lowercase base32
  characters from the identity's id (as a GVC's alias), so it is stable across updates,
  unique, and a valid name for an AWS role or a GCP service account;
- ``aws``, ``gcp``, ``azure``: for each access policy the identity holds, ``{usable: false,
  lastError}``: Plinth stores access policies but reaches no cloud provider, so none is ever
  usable, and ``lastError`` says so. ``ngs`` has no status on the platform either.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.base import Item, KindContext
from plinth.kinds.gvc.prepare import gvc_alias

CLOUD_PROVIDERS = ("aws", "gcp", "azure")
NOT_APPLIED = "Plinth does not connect to cloud providers: the access policy is stored, not applied"


def compute_identity_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    """``{objectName, <provider>: {usable, lastError}...}``; pure."""
    status: dict[str, Any] = {}
    if ctx.id is not None:
        status["objectName"] = gvc_alias(ctx.id)
    for provider in CLOUD_PROVIDERS:
        if provider in item:
            status[provider] = {"usable": False, "lastError": NOT_APPLIED}
    return status
