"""The hook that removes a volume set's engine volumes once the volume set is gone.

A stateful replica's volume (``plan.volume_name``) outlives its containers: restarts and
template updates keep it. It goes only when its volume set goes. The control loop does not
watch volume sets yet, so whoever learns of the deletion calls :func:`remove_volume_set`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from plinth.runtime.containers.protocol import GVC, ORG, ContainerEngine
from plinth.runtime.controller.plan import VOLUME_SET


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
