"""What a location's hooks do: origin, provider and region; built-in tags; status; the rules.

- On create by a client (a BYOK location): ``origin`` is ``custom``, ``provider`` is ``byok``
  (the default, and the only value a client may create), no ``region``; the name may not start
  with a catalog provider's prefix (``aws-``, ``gcp-``, ``azure-``), which the catalog's own
  names use, so a later catalog entry can never collide with a BYOK location.
- On update: ``provider`` and ``region`` left out of a body are the stored ones; a different
  value is refused (``immutable``). ``origin`` is server-owned and carried over.
- A built-in location carries the ``cpln/city``, ``cpln/country`` and ``cpln/continent`` tags of
  its catalog entry; the server sets them on every write (a ``$replace/tags`` cannot drop them).
- ``status``: a built-in location's ``geo`` from the catalog and ``ipRanges: []`` (Plinth
  provisions nothing, so no egress address is anybody's); a BYOK location's is ``{}``.
"""

from __future__ import annotations

from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.location.catalog import BUILTIN_LOCATIONS, builtin_tags
from plinth.kinds.location.models import BYOK

BUILTIN = "builtin"
CUSTOM = "custom"
#: Name prefixes the catalog's providers use; BYOK names may not start with them.
CATALOG_PREFIXES: tuple[str, ...] = tuple(sorted({f"{entry.provider}-" for entry in BUILTIN_LOCATIONS.values()}))


def is_builtin(item: Item) -> bool:
    return item.get("origin") == BUILTIN


def prepare_location(item: Item, old: Item | None, ctx: KindContext) -> None:
    """Origin, provider and region as the module docstring says; a built-in's tags."""
    if old is None:
        item.setdefault("origin", CUSTOM)
        item.setdefault("provider", BYOK)
    else:
        for field in ("provider", "region"):
            if field not in item and field in old:
                item[field] = old[field]
    entry = BUILTIN_LOCATIONS.get(item["name"]) if is_builtin(item) else None
    if entry is not None:
        item["tags"] = {**item.get("tags", {}), **builtin_tags(entry)}


def validate_location(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """A client creates BYOK locations only, under names the catalog cannot take."""
    if old is not None or is_builtin(item):
        return []
    errors: list[FieldError] = []
    if item.get("provider") != BYOK:
        errors.append(
            FieldError("provider", "must be 'byok': only BYOK locations are created; provider locations are built in")
        )
    if "region" in item:
        errors.append(FieldError("region", "is set by the server for built-in locations; a BYOK location has none"))
    if item["name"].startswith(CATALOG_PREFIXES):
        prefixes = ", ".join(f"'{p}'" for p in CATALOG_PREFIXES)
        errors.append(FieldError("name", f"must not start with {prefixes}: those names are the built-in locations'"))
    return errors


def compute_location_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    entry = BUILTIN_LOCATIONS.get(item["name"]) if is_builtin(item) else None
    if entry is None:
        return {}
    return {"geo": entry.geo(), "ipRanges": []}


def disabling(new: Item, old: Item) -> str | None:
    """What an update does that a GVC placed in the location would not survive: disabling it."""
    if (old.get("spec") or {}).get("enabled", True) and not (new.get("spec") or {}).get("enabled", True):
        return "disabled"
    return None
