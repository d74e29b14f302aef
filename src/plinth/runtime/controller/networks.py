"""A network per GVC: made by the reconcile pass, removed here when the GVC is gone.

The plan puts every replica of a GVC on :func:`~.plan.network_name` (``plinth_{org}_{gvc}``)
with the DNS alias of its workload's internal name, so ``{workload}.{gvc}.cpln.local``
reaches that workload's replicas from any container of the same GVC, and from nowhere else.
The reconcile pass makes the network before the first container that joins it, labelled
``plinth.managed``, the org, the GVC and the controller's scope.

:class:`NetworkKeeper` remembers the GVC networks this controller has planned and removes one
once its GVC has left the informer's cache (after the pass collected its containers). A
removal the engine refuses (a container still attached, e.g. a finished cron run kept for its
logs) is tried again at the next pass. The driver cannot list networks, so a GVC deleted
while no controller ran leaves its (empty) network behind (docs/runtime.md).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from plinth.runtime.containers.protocol import ContainerEngine, EngineError, ReplicaSpec

log = logging.getLogger(__name__)


class NetworkKeeper:
    """The GVC networks one controller planned, by GVC name (module docstring)."""

    def __init__(self) -> None:
        self.known: dict[str, str] = {}

    def planned(self, specs: Iterable[ReplicaSpec], gvc_label: str) -> None:
        """Note the networks the pass's desired specs join."""
        for spec in specs:
            if spec.network:
                self.known[spec.labels[gvc_label]] = spec.network

    async def collect(self, driver: ContainerEngine, gvcs: Collection[str]) -> dict[str, str]:
        """Remove the networks of GVCs not in ``gvcs``; errors by ``network:{name}``."""
        errors: dict[str, str] = {}
        for gvc, network in list(self.known.items()):
            if gvc in gvcs:
                continue
            try:
                await driver.remove_network(network)
            except EngineError as exc:  # still in use: the next pass tries again
                errors[f"network:{network}"] = str(exc)
                continue
            log.info("removed network %s of GVC %s", network, gvc)
            del self.known[gvc]
        return errors
