"""Dropping the log lines of workloads and orgs that are gone (docs/runtime.md, "Logs").

The log store keeps each workload's lines up to its bound, whatever happens to the workload;
without this, a deleted workload's lines would stay, and a workload made later with its name
would show them. :class:`LogKeeper` is level-triggered like the rest of the loop: after each
pass, every workload of the org with lines stored that the informer's (synced) cache no longer
holds has them dropped (``LogService.drop_workload``, which also stops storing what its going
containers still write). A deletion seen while no controller ran is caught by the first pass.
The fleet drops an org's lines when the org goes, and those of orgs it does not know once it has
listed them (as it removes their containers).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection

from plinth.runtime.logs import LogService

log = logging.getLogger(__name__)


class LogKeeper:
    """Drops the lines of what is gone from ``service``'s store."""

    def __init__(self, service: LogService) -> None:
        self.service = service

    async def collect(self, org: str, workloads: Collection[tuple[str, str]]) -> dict[str, str]:
        """Drop the lines of ``org``'s workloads not in ``workloads`` (``(gvc, name)`` of those
        that exist); the errors by ``org/gvc/workload`` (a failure is retried on the next pass)."""
        errors: dict[str, str] = {}
        stored = await asyncio.to_thread(self.service.workloads, org)
        for _, gvc, name in sorted(stored):
            if (gvc, name) in workloads:
                continue
            try:
                dropped = await asyncio.to_thread(self.service.drop_workload, org, gvc, name)
            except Exception as exc:  # the store's error: the next pass tries again
                errors[f"{org}/{gvc}/{name}"] = f"dropping its log lines failed: {exc}"
                continue
            log.info("org %s: workload %s/%s is gone: %d log lines dropped", org, gvc, name, dropped)
        return errors

    async def drop_orgs(self, orgs: Collection[str]) -> None:
        """Drop every line of ``orgs`` (gone); a failure is logged (tried again at the next start)."""
        for org in sorted(orgs):
            try:
                dropped = await asyncio.to_thread(self.service.drop_org, org)
            except Exception:
                log.exception("dropping the log lines of org %s failed", org)
                continue
            if dropped:
                log.info("org %s is gone: %d log lines dropped", org, dropped)

    async def orgs(self) -> set[str]:
        """The orgs with lines stored."""
        return {org for org, _, _ in await asyncio.to_thread(self.service.workloads)}
