"""The engine extensions a server registers (``extensions.py``): quotas, the statuses policies
settle, GVC placements. The server and the CLI's store commands build their engine with this
list; an engine built without one (tests, tools) gets it too."""

from __future__ import annotations

from plinth.engine.extensions import ExtensionFactory
from plinth.engine.grants import Grants
from plinth.engine.placement import Placements
from plinth.engine.quotas import quotas_extension


def standard_extensions() -> list[ExtensionFactory]:
    """Every extension, in the order their hooks run: quotas first, so a tally stays last in
    a transaction (it locks its quota until the commit)."""
    return [quotas_extension(), Grants, Placements]
