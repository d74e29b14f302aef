"""Secret files for an engine without a secret store (docker outside swarm mode): each file
written to a tmpfs on the host and bind-mounted read-only into its container.

Podman keeps a replica's secret files in its own secret store (``--secret``). Docker keeps
secrets only in swarm mode, so for docker the driver puts them where a secret may be: in memory,
never on a disk. :class:`TmpfsSecrets` holds them under a root on a tmpfs (``/dev/shm`` by
default, ``PLINTH_SECRET_TMPFS`` to choose another), one directory per container named after
it (0700), one file per secret file (its own mode, 0400 by default), mounted at the file's path
with ``--mount type=bind,...,readonly``. A root that is not on a tmpfs is refused with an
:class:`EngineError` saying so, before anything is written.

The directory goes when the container is removed through the driver. Those of containers
removed behind its back (by hand, by another tool) are swept about once a minute by the
driver's ``list`` (:meth:`TmpfsSecrets.sweep`), which asks the engine for every managed
container: one root serves one engine daemon. Like the engine's secret store, the files are
readable by root on the host while their container exists: the runtime needs them to mount them.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from plinth.runtime.containers.protocol import EngineError, SecretFile

DEFAULT_ROOT = "/dev/shm"
ROOT_ENV = "PLINTH_SECRET_TMPFS"
#: The directory under the tmpfs that holds every container's directory.
FOLDER = "plinth-secret-files"
#: How often the driver looks for files of containers that are gone, and how old a directory
#: must be to go then (younger ones may belong to a ``run`` under way).
SWEEP_EVERY_S = 60.0


def _mount_type(path: Path) -> str:
    """The filesystem type of the mount holding ``path`` (the longest mount point above it)."""
    best, kind = "", ""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return ""
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = str(path) == point or str(path).startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[2]
    return kind


class TmpfsSecrets:
    """Secret files of containers, on a tmpfs under ``root`` (module docstring)."""

    def __init__(self, root: str | None = None) -> None:
        self.tmpfs = Path(root or os.environ.get(ROOT_ENV) or DEFAULT_ROOT)
        self.root = self.tmpfs / FOLDER
        self._swept = 0.0

    def sweep_due(self) -> bool:
        """Whether files were written here (by any process) and a minute passed since the last sweep."""
        return time.monotonic() - self._swept >= SWEEP_EVERY_S and self.root.is_dir()

    def sweep(self, containers: set[str], min_age_s: float = SWEEP_EVERY_S) -> list[str]:
        """Remove the directories of containers not in ``containers`` (the engine's managed
        ones) older than ``min_age_s``; the names removed."""
        self._swept = time.monotonic()
        removed = []
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return []
        for entry in entries:
            try:
                old = time.time() - entry.stat(follow_symlinks=False).st_mtime >= min_age_s
            except OSError:
                continue
            if entry.name not in containers and old:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.name)
        return removed

    def directory(self, container: str) -> Path:
        return self.root / container

    def mount_args(self, container: str, files: Sequence[SecretFile]) -> list[str]:
        """The ``run`` arguments that mount ``container``'s files (written by :meth:`write`)."""
        args: list[str] = []
        for index, file in enumerate(files):
            source = self.directory(container) / str(index)
            args += ["--mount", f"type=bind,source={source},target={file.path},readonly"]
        return args

    def write(self, container: str, files: Sequence[SecretFile]) -> None:
        """Write ``container``'s files afresh; :class:`EngineError` when the root is no tmpfs."""
        if _mount_type(self.tmpfs) != "tmpfs":
            raise EngineError(f"secret files need a tmpfs for docker: {self.tmpfs} is not one (set {ROOT_ENV})")
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = self.directory(container)
        shutil.rmtree(folder, ignore_errors=True)  # a leftover of a failed attempt
        folder.mkdir(mode=0o700)
        for index, file in enumerate(files):
            fd = os.open(folder / str(index), os.O_WRONLY | os.O_CREAT | os.O_EXCL, file.mode)
            with os.fdopen(fd, "wb") as out:
                out.write(file.value)
            os.chmod(folder / str(index), file.mode)  # whatever the umask

    def remove(self, container: str) -> None:
        shutil.rmtree(self.directory(container), ignore_errors=True)

    def exists(self, container: str) -> bool:
        return self.directory(container).exists()
