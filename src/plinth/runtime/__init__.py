"""What runs workloads: one small protocol (``base``), and its implementations.

Plinth itself runs no containers. Whatever deployments, replicas, readiness and cron
executions report comes from a :class:`~plinth.runtime.base.Runtime`; the engine calls it, and
kinds never import it (the engine hands them what it reports). ``simulated`` is the default;
``none`` says that nothing runs; ``containers`` reports what a runtime controller observed
(``observed.py``). A driver for a real cluster is one more module here.
"""

from __future__ import annotations

from plinth.runtime.base import Runtime
from plinth.runtime.none import NoRuntime
from plinth.runtime.observed import ContainersRuntime
from plinth.runtime.simulated import SimulatedRuntime

RUNTIMES: dict[str, type[Runtime]] = {
    "simulated": SimulatedRuntime,
    "none": NoRuntime,
    "containers": ContainersRuntime,
}


def make_runtime(name: str, dataplane_url: str | None = None) -> Runtime:
    """The runtime called ``name`` (``--runtime``); ``ValueError`` for an unknown name.
    ``dataplane_url`` is where the containers runtime's data plane answers (``status.remote``)."""
    if name == "containers":
        return ContainersRuntime(dataplane_url)
    try:
        return RUNTIMES[name]()
    except KeyError:
        raise ValueError(f"unknown runtime '{name}' (choose one of: {', '.join(RUNTIMES)})") from None
