"""Entry point: ``python -m bench [--quick] [--backend sqlite] [--workers 1]``."""

from __future__ import annotations

import sys

from bench.scenario import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
