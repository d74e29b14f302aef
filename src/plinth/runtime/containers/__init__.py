"""Running replicas as containers: the engine driver seam (``protocol``) and its podman/docker
implementation (``cli``), driven by the runtime controller that ``plinth serve --runtime
containers`` starts (docs/runtime.md, "Containers and the gateway")."""

from __future__ import annotations

from plinth.runtime.containers.cli import CliEngine, find_engine
from plinth.runtime.containers.protocol import (
    ContainerEngine,
    ContainerInfo,
    EngineError,
    EngineUnavailable,
    ExecRequest,
    ExecResult,
    ExecStream,
    ImagePullError,
    ReplicaSpec,
    SecretFile,
    VolumeMount,
    identity_labels,
    spec_digest,
)

__all__ = [
    "CliEngine",
    "ContainerEngine",
    "ContainerInfo",
    "EngineError",
    "EngineUnavailable",
    "ExecRequest",
    "ExecResult",
    "ExecStream",
    "ImagePullError",
    "ReplicaSpec",
    "SecretFile",
    "VolumeMount",
    "find_engine",
    "identity_labels",
    "spec_digest",
]
