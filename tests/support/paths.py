"""Where things are, relative to the repository. Every path here is inside the repository (a clone stands
alone; ``tests/test_standalone.py`` checks it), except what the environment names explicitly."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The official operator's CRD schemas, copied into the repository (see its README for source and licence).
CRDS = ROOT / "tests" / "data" / "crds"
#: The official CLI, installed by npm into a git-ignored cache folder by tests/compat/conftest.py.
CPLN_PREFIX = ROOT / ".cache" / "cpln"
CPLN_BIN = Path(os.environ.get("CPLN_BIN", CPLN_PREFIX / "node_modules" / ".bin" / "cpln"))
