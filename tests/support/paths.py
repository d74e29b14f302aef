"""Where things are, relative to the repository (CI runs a fresh clone with ``shared/`` beside it)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("PLINTH_SHARED_DIR", ROOT.parent / "shared"))
CRDS = SHARED / "reference" / "crds"
#: The official CLI, installed by npm into a git-ignored cache folder (see tests/cli/record_goldens.py).
CPLN_PREFIX = ROOT / ".cache" / "cpln"
CPLN_BIN = Path(os.environ.get("CPLN_BIN", CPLN_PREFIX / "node_modules" / ".bin" / "cpln"))
