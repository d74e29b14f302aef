"""A pinned npm package (the official CLI for tests/compat, axe-core for tests/console) installed
into the git-ignored ``.cache`` on first use: under a file lock (pytest-xdist workers install it
once), with ``--no-audit --no-fund`` (no other registry call). When node/npm is missing or the
install fails the caller's tests skip with the reason, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

from tests.support.required import unavailable

NPM_TIMEOUT_S = 240  # under pytest-timeout's 300 s for the test whose set-up installs it


def installed_version(prefix: Path, package: str) -> str | None:
    try:
        return str(json.loads((prefix / "node_modules" / package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def ensure_package(prefix: Path, package: str, version: str) -> Path:
    """``<prefix>/node_modules/<package>`` at ``version``, installed with npm when missing."""
    what = f"{package}@{version}"
    if installed_version(prefix, package) == version:
        return prefix / "node_modules" / package
    if shutil.which("npm") is None:
        unavailable(what, f"'npm' is not on PATH: install Node.js to fetch {what} for the tests")
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix.parent / f"{prefix.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed_version(prefix, package) != version:
            args = ["npm", "install", "--prefix", str(prefix), what, "--no-audit", "--no-fund", "--no-save"]
            args.append("--loglevel=error")
            try:
                done = subprocess.run(args, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False)
            except subprocess.TimeoutExpired:
                unavailable(what, f"'{' '.join(args)}' took more than {NPM_TIMEOUT_S} s")
            if done.returncode != 0:
                unavailable(what, f"'{' '.join(args)}' failed ({done.returncode}):\n{done.stderr[-2000:]}")
    if installed_version(prefix, package) != version:
        unavailable(what, f"npm did not install {what} into {prefix}")
    return prefix / "node_modules" / package
