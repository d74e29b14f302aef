"""A workload's containers (kinds.md §1.4-§1.6): the container model and its own rules.

Owned by the container work: ``ContainerSpec`` (image, ports, resources, env, probes,
volumes, GPU, lifecycle, metrics), ``fill_container_defaults`` and ``container_errors``.
"""

from __future__ import annotations

from typing import Any

from plinth.errors import FieldError
from plinth.kinds._spec_model import NonEmptyStr, SpecModel
from plinth.kinds.base import Item, KindContext


class ContainerSpec(SpecModel):
    name: NonEmptyStr | None = None
    image: NonEmptyStr | None = None


def fill_container_defaults(spec: dict[str, Any]) -> None:
    """Fill each container's API defaults in ``spec`` (already schema-valid); mutates it."""


def container_errors(item: Item, ctx: KindContext) -> list[FieldError]:
    """Every rule on ``item['spec']['containers']`` that the schema alone cannot state
    (uniqueness, the type matrix for ports and probes, ...), each at its JSON path."""
    return []
