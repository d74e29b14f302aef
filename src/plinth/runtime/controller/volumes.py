"""A volume set's engine volumes go with the volume set.

A stateful replica's volume (``plan.volume_name``) outlives its containers: restarts and
template updates keep it. :class:`VolumeKeeper` remembers the volume sets this controller's
plans mounted and, after a pass, removes the volumes of each one that has left the
informer's cache (:func:`remove_volume_set`, in every location). A removal the engine
refuses (a container still mounting it: a workload not yet removed) is tried again at the
next pass. Like the GVC networks, a volume set deleted while no controller ran leaves its
volumes behind: the keeper only knows what it planned since it started.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence

from plinth.runtime.containers.protocol import GVC, ORG, ContainerEngine, EngineError, ReplicaSpec
from plinth.runtime.controller.plan import VOLUME_SET

log = logging.getLogger(__name__)


async def remove_volume_set(
    driver: ContainerEngine, org: str, gvc: str, volume_set: str, labels: Mapping[str, str] | None = None
) -> Sequence[str]:
    """Remove every engine volume of ``volume_set`` of ``org``/``gvc`` (in every location)
    that also carries ``labels`` (the controller's scope); answers their names. A volume still
    mounted by a container is refused by the engine (:class:`EngineError`): remove the
    workloads that use it first."""
    names = await driver.list_volumes({**dict(labels or {}), ORG: org, GVC: gvc, VOLUME_SET: volume_set})
    for name in names:
        await driver.remove_volume(name)
    return names


class VolumeKeeper:
    """The volume sets one controller's plans mounted, as ``(gvc, volume set)``."""

    def __init__(self) -> None:
        self.known: set[tuple[str, str]] = set()

    def planned(self, specs: Iterable[ReplicaSpec]) -> None:
        """Note the volume sets the pass's desired specs mount."""
        for spec in specs:
            for mount in spec.volumes:
                labels = dict(mount.labels)
                if VOLUME_SET in labels:
                    self.known.add((labels[GVC], labels[VOLUME_SET]))

    async def collect(
        self, driver: ContainerEngine, org: str, scope: Mapping[str, str], volume_sets: Collection[tuple[str, str]]
    ) -> dict[str, str]:
        """Remove the volumes of known volume sets not in ``volume_sets``; errors by
        ``volumeset:{gvc}/{name}``."""
        errors: dict[str, str] = {}
        for gvc, name in sorted(self.known - set(volume_sets)):
            try:
                removed = await remove_volume_set(driver, org, gvc, name, scope)
            except EngineError as exc:  # still mounted: the next pass tries again
                errors[f"volumeset:{gvc}/{name}"] = str(exc)
                continue
            log.info("volume set %s/%s is gone: removed its volumes %s", gvc, name, ", ".join(removed) or "(none)")
            self.known.discard((gvc, name))
        return errors
