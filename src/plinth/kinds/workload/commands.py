"""Workload commands (types-ts command.ts): the request bodies of ``POST .../workload/{name}/-command``.

A command asks the runtime to do something now: ``runCronWorkload`` runs a cron workload once
in one location (also while suspended, whatever its ``concurrencyPolicy``), and
``stopReplica`` stops one replica, which its controller replaces. The engine stores each
command with the outcome the runtime gives it (``actions.py``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from plinth.errors import FieldError
from plinth.kinds.base import Item
from plinth.kinds.spec_model import NonEmptyStr, SpecModel

CommandType = Literal["runCronWorkload", "stopReplica"]

#: The permission each command needs on the workload (docs.controlplane.com/reference/workload/security).
COMMAND_PERMISSIONS: dict[str, str] = {
    "runCronWorkload": "exec.runCronWorkload",
    "stopReplica": "exec.stopReplica",
}


class EnvOverride(SpecModel):
    name: NonEmptyStr
    value: str | None = None


class ContainerOverride(SpecModel):
    name: NonEmptyStr
    env: list[EnvOverride] | None = None
    command: str | None = None
    args: list[str] | None = None
    memory: str | None = None
    cpu: str | None = None
    image: NonEmptyStr | None = None


class CommandSpec(SpecModel):
    """Both commands' spec fields; which ones a type takes is checked by :func:`command_errors`."""

    location: NonEmptyStr
    replica: NonEmptyStr | None = None
    containerOverrides: list[ContainerOverride] | None = None
    activeDeadlineSeconds: Annotated[int, Field(ge=1, le=86400)] | None = None


class CommandRequest(SpecModel):
    """The body of ``POST -command``."""

    kind: Literal["command"] | None = None
    type: CommandType
    spec: CommandSpec
    tags: dict[str, Any] | None = None


def command_errors(command: dict[str, Any], workload: Item, locations: tuple[str, ...]) -> list[FieldError]:
    """What a schema-valid command may not ask of this workload, each at its JSON path."""
    errors: list[FieldError] = []
    spec = command["spec"]
    kind = workload["spec"]["type"]
    if command["type"] == "runCronWorkload":
        if kind != "cron":
            errors.append(FieldError("type", f"runCronWorkload runs cron workloads; this one is '{kind}'"))
        if "replica" in spec:
            errors.append(FieldError("spec.replica", "is a field of stopReplica"))
        names = {c["name"] for c in workload["spec"]["containers"]}
        for i, override in enumerate(spec.get("containerOverrides") or []):
            if override["name"] not in names:
                errors.append(FieldError(f"spec.containerOverrides[{i}].name", "names no container of the workload"))
    else:
        for field in ("containerOverrides", "activeDeadlineSeconds"):
            if field in spec:
                errors.append(FieldError(f"spec.{field}", "is a field of runCronWorkload"))
    if spec["location"] not in locations:
        placed = ", ".join(locations) or "none"
        errors.append(FieldError("spec.location", f"must be a location of the GVC (placed in: {placed})"))
    return errors
