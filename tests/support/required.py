"""What the suite needs from the machine (PostgreSQL, Chromium, Node packages): when one cannot
be had, its tests skip with the reason, except under ``CI=true``, where a missing part is a
broken build rather than a choice, so they fail."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(what: str, reason: str) -> NoReturn:
    """Skip the calling test (fail it under ``CI=true``) because ``what`` is missing, saying why."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required under CI=true: {reason}")
    pytest.skip(reason)
