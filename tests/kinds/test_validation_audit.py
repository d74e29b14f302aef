"""docs/validation-audit.md stays true to the code: every file its table says enforces a rule
exists, so a rule moved or removed without the table following is caught."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AUDIT = ROOT / "docs" / "validation-audit.md"
SRC = ROOT / "src" / "plinth"


def enforced_in_column() -> list[list[str]]:
    rows = [line for line in AUDIT.read_text().splitlines() if line.startswith("| ") and "`" in line]
    return [re.findall(r"`([^`]+\.py)`", line.split(" | ")[1]) for line in rows]


def test_the_audit_has_one_table_of_rules() -> None:
    rows = enforced_in_column()
    assert len(rows) >= 50
    assert all(files for files in rows), "every rule names where it is enforced"


def test_every_file_the_audit_names_exists() -> None:
    missing = []
    for files in enforced_in_column():
        directory = SRC
        for name in files:
            path = SRC / name if "/" in name else directory / name
            if "*" not in name and not path.exists():
                missing.append(name)
            directory = path.parent
    assert missing == []
