"""The container schema, ``spec.containers[]`` (docs.controlplane.com/reference/workload/containers): every
single-field rule.

Fields are in the order of the platform's schema as TS and TF's wire struct list them, and
the stored container keeps that order. Nested shapes live beside their rules: ports in
``ports``, probes in ``probes``, ``env`` in ``env``, mounts in ``volumes``, compute and GPUs
in ``resources``. Rules relating fields or containers to each other are in
``container_rules``; defaults are in ``container_defaults``.

Choices where the sources differ (TF resource_workload.go, docs.controlplane.com/reference/workload/containers, AI):

- the name is at most 64 characters (AI, and the general name limit, ``kinds/base.py``), not TF's 63;
- names may not start with ``cpln-`` (TF, AI) nor ``debugger-`` (AI); DOCS say ``cpln_``,
  which the name pattern already excludes;
- ``name`` is required: TF requires it and ``$patch/containers`` merges by it. (The CLI's
  default, the image's last path segment, is filled client-side.)
- ``image`` is optional here because ``vm`` workloads boot from a disk instead; the
  "required unless ``vm``" rule needs the type and is in ``container_rules``. Every form
  the docs list (docs.controlplane.com/reference/image) is accepted and stored as sent; the API's rewrite of this
  org's own registry host (``ORG.registry.cpln.io/x:1``) to a link is not done: the container defaults do not
  see the org, and which link form the API writes is unconfirmed.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from plinth.kinds.base import default_name_rule
from plinth.kinds.spec_model import SpecModel
from plinth.kinds.workload.env import ContainerEnvVar
from plinth.kinds.workload.ports import ContainerPort, ContainerPortNumber
from plinth.kinds.workload.probes import Exec, Probe
from plinth.kinds.workload.resources import Gpu, Quantity
from plinth.kinds.workload.volumes import Volumes

RESERVED_NAME_PREFIXES = ("cpln-", "debugger-")
#: Names of the containers the platform adds to every replica (TF).
FORBIDDEN_NAMES: frozenset[str] = frozenset(
    {
        "istio-proxy",
        "queue-proxy",
        "istio-validation",
        "cpln-envoy-assassin",
        "cpln-writer-proxy",
        "cpln-reader-proxy",
        "cpln-dbaas-config",
    }
)

# Link forms of an image of this org's registry (docs.controlplane.com/reference/image): //image/NAME[:TAG] or
# /org/ORG/image/NAME[:TAG].
_IMAGE_LINK = re.compile(r"(//image/|/org/[^/\s]+/image/)[^/\s]+")


def _check_container_name(name: str) -> str:
    problem = default_name_rule(name)
    if problem is not None:
        raise ValueError(problem)
    if name in FORBIDDEN_NAMES:
        raise ValueError(f"'{name}' is the name of a container the platform adds")
    for prefix in RESERVED_NAME_PREFIXES:
        if name.startswith(prefix):
            raise ValueError(f"must not start with '{prefix}' (reserved by the platform)")
    return name


def _check_image(image: str) -> str:
    """Any registry reference (``nginx:latest``, ``ghcr.io/a/b:1``, ``ORG.registry.cpln.io/x:1``)
    or a link to an image of this org's registry; no whitespace."""
    if not image or any(char.isspace() for char in image):
        raise ValueError("must be a non-empty image reference without whitespace")
    if image.startswith("/") and not _IMAGE_LINK.fullmatch(image):
        raise ValueError("an image link must be //image/NAME:TAG or /org/ORG/image/NAME:TAG")
    return image


def _check_absolute(path: str) -> str:
    if not path.startswith("/"):
        raise ValueError("must be an absolute path (start with '/')")
    return path


class Metrics(SpecModel):
    """Custom metrics the platform scrapes every 30 s (DOCS custom-metrics.mdx)."""

    port: ContainerPortNumber
    path: Annotated[str, Field(min_length=1, max_length=128)]
    dropMetrics: list[str] | None = None


class LifecycleHook(SpecModel):
    """``postStart`` / ``preStop``: only ``exec`` handlers exist (TS, TF)."""

    exec: Exec


class Lifecycle(SpecModel):
    postStart: LifecycleHook | None = None
    preStop: LifecycleHook | None = None


class ContainerSpec(SpecModel):
    name: Annotated[str, AfterValidator(_check_container_name)]
    image: Annotated[str, AfterValidator(_check_image)] | None = None
    workingDir: Annotated[str, AfterValidator(_check_absolute)] | None = None
    metrics: Metrics | None = None
    #: Deprecated; the defaults move it into ``ports`` (``container_defaults``).
    port: ContainerPortNumber | None = None
    ports: list[ContainerPort] | None = None
    memory: Quantity | None = None
    readinessProbe: Probe | None = None
    livenessProbe: Probe | None = None
    cpu: Quantity | None = None
    minCpu: Quantity | None = None
    minMemory: Quantity | None = None
    env: list[ContainerEnvVar] | None = None
    gpu: Gpu | None = None
    inheritEnv: bool | None = None
    command: Annotated[str, Field(max_length=256)] | None = None
    args: list[str] | None = None
    lifecycle: Lifecycle | None = None
    volumes: Volumes | None = None
