"""A container's mounts, ``volumes[]`` (docs.controlplane.com/reference/workload/volumes).

Schema rules (reported with every other schema error): at most 15 mounts per container;
the URI scheme is one TF's regex allows (``s3 gs azureblob azurefs cpln scratch k8s``);
a ``cpln://`` URI names a secret (``cpln://secret/NAME`` or ``cpln://secret/NAME.KEY``) or a
volume set (``cpln://volumeset/NAME``), the only two the DOCS list; ``path`` is required,
absolute, and not one of the system paths the platform mounts itself, with or without a
trailing ``/``. Whether the linked secret or volume set exists, and whether its file system
suits the workload type, is the integration's job, not this module's.

``vm`` disks (``name``, ``bus``, ``bootOrder``, no ``path``) are not modelled: Plinth does
not serve ``vm`` workloads yet.

Cross-mount rule (:func:`mount_overlap_errors`): two mounts of one container may not share a
path nor nest one inside the other (AI), since one would hide the other.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from plinth.errors import FieldError
from plinth.kinds.spec_model import SpecModel

MAX_VOLUMES = 15
#: Deprecated and unused by the platform; the sources still give it a default (TS, TF).
DEFAULT_RECOVERY_POLICY = "retain"
RESERVED_MOUNT_PATHS: frozenset[str] = frozenset({"/dev", "/dev/log", "/tmp", "/var", "/var/log"})

_URI = re.compile(r"(s3|gs|azureblob|azurefs|cpln|scratch|k8s)://\S+")
_NAME = r"[a-z][-a-z0-9]*[a-z0-9]"
_CPLN_URI = re.compile(rf"cpln://(secret/{_NAME}(\.\S+)?|volumeset/{_NAME})")


def _check_uri(uri: str) -> str:
    if not _URI.fullmatch(uri):
        raise ValueError(
            "must be s3://BUCKET, gs://BUCKET, azureblob://ACCOUNT/CONTAINER, azurefs://ACCOUNT/SHARE, "
            "cpln://secret/NAME, cpln://volumeset/NAME, scratch://NAME or k8s://..."
        )
    if uri.startswith("cpln://") and not _CPLN_URI.fullmatch(uri):
        raise ValueError("a cpln:// volume must be cpln://secret/NAME, cpln://secret/NAME.KEY or cpln://volumeset/NAME")
    return uri


def _check_mount_path(path: str) -> str:
    if not path.startswith("/"):
        raise ValueError("must be an absolute path (start with '/')")
    if normalise(path) in RESERVED_MOUNT_PATHS:
        raise ValueError(f"cannot mount over {normalise(path)}: it is reserved by the platform")
    return path


def normalise(path: str) -> str:
    """``path`` without its trailing slashes (``/`` stays ``/``): ``/data/`` and ``/data`` are one mount."""
    return path.rstrip("/") or "/"


class ContainerVolume(SpecModel):
    uri: Annotated[str, AfterValidator(_check_uri)]
    recoveryPolicy: Literal["retain", "recycle"] | None = None
    path: Annotated[str, AfterValidator(_check_mount_path)]


Volumes = Annotated[list[ContainerVolume], Field(max_length=MAX_VOLUMES)]


def _nests(outer: str, inner: str) -> bool:
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def mount_overlap_errors(volumes: list[dict[str, Any]], base: str) -> list[FieldError]:
    """One error per mount whose path equals or nests with an earlier mount's, at its own path.

    ``base`` is the container's JSON path (``spec.containers[0]``).
    """
    errors: list[FieldError] = []
    seen: list[tuple[int, str]] = []
    for index, volume in enumerate(volumes):
        path = normalise(volume["path"])
        for earlier_index, earlier in seen:
            if _nests(earlier, path) or _nests(path, earlier):
                how = "is the same path as" if path == earlier else "overlaps"
                errors.append(
                    FieldError(
                        f"{base}.volumes[{index}].path",
                        f"{how} {base}.volumes[{earlier_index}].path ({earlier}); mounts may not share or nest paths",
                    )
                )
                break
        seen.append((index, path))
    return errors
