"""``--runtime containers`` before the controller's reports reach the API: every deployment is
not ready, "Waiting for the runtime controller" (a stand-in, replaced by the runtime that
serves the controller's observations)."""

from __future__ import annotations

from collections.abc import Sequence

from plinth.runtime.base import CommandOutcome, Doc, Placement, WorkloadSummary
from plinth.runtime.deployments import deployment_doc

MESSAGE = "Waiting for the runtime controller"


class AwaitingController:
    name = "containers"

    def summary(self, placement: Placement) -> WorkloadSummary:
        return WorkloadSummary(ready=False, replicas=0, message=MESSAGE)

    async def deployments(self, placement: Placement, commands: Sequence[Doc]) -> list[Doc]:
        return [
            deployment_doc(placement, location, ready=False, message=MESSAGE, processed=0, versions=[], executions=[])
            for location in placement.locations
        ]

    async def submit(self, placement: Placement, command: Doc) -> CommandOutcome:
        return CommandOutcome("pending", {})
