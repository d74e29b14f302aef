"""Regenerate the golden files under tests/cli/golden/.

Usage (from the repository root)::

    npm install --prefix .cache/cpln @controlplane/cli@3.10.1   # once, outside the repo
    PYTHONPATH=src:. python tests/cli/record_goldens.py [NAME-SUBSTRING ...]

Cases whose ``source`` is ``cpln`` are recorded by running the official CLI (``CPLN_BIN``
overrides its path) against the canned server; ``plinth`` cases are Plinth's own documented
behaviour and are recorded from Plinth. Review the diff before committing: a golden is a
promise about output bytes.
"""

from __future__ import annotations

import sys

from tests.cli.golden_cases import CASES
from tests.cli.golden_runner import GOLDEN_DIR, run_case, save_golden


def main(filters: list[str]) -> int:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        if filters and not any(f in case.name for f in filters):
            continue
        outcome = run_case(case, case.source)
        save_golden(case, outcome)
        print(f"{case.source:6} exit={outcome.exit} {case.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
