"""A workload's containers (docs.controlplane.com/reference/workload/containers, .../volumes): the names the rest of
the kind uses.

``models`` takes :class:`ContainerSpec` from here, ``prepare`` takes
:func:`fill_container_defaults` and ``rules`` takes :func:`container_errors`. The work is
split by job:

- ``container_models``: the container schema and its single-field rules;
- ``ports``, ``probes``, ``env``, ``volumes``, ``resources``: the nested shapes, each with
  its own rules and constants;
- ``container_defaults``: the API's defaults on write;
- ``container_rules``: the rules across fields and containers, and the type matrix.
"""

from __future__ import annotations

from plinth.kinds.workload.container_defaults import fill_container_defaults
from plinth.kinds.workload.container_models import ContainerSpec
from plinth.kinds.workload.container_rules import container_errors

__all__ = ["ContainerSpec", "container_errors", "fill_container_defaults"]
