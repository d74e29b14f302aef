"""Storing what a runtime controller observed (``POST /org/{org}/-runtime/observations``).

The body (``runtime/observations.py``'s ``ObservationBatch``) is validated whole first: a 400
names every offending field path and nothing is stored. Then each workload's observation is
stored on its own (``observed_records.py``), in one transaction with its status computed from
it (``StatusInputs.recomputed_with``), so every worker and replica answers the same, at once:

- the item is the one of the kind whose status ``ReadsRuntime`` (the engine names no kind); a
  workload that does not exist (deleted while the controller looked) is answered ``missing``
  and nothing is stored for it;
- ``versions`` (template -> workload version) is merged with the stored one for the templates
  still observed and not named now: a controller that restarted and no longer knows which
  version an old replica's template served keeps the mapping it reported before;
- an observation equal to the stored one is ``unchanged``: no write, no event, so a controller
  may post after every pass;
- the observation record is never watched, and the status rewrite keeps the item's version
  (no event), as every status refresh does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import ValidationError

from plinth.engine.address import Address
from plinth.engine.core import EngineCore
from plinth.engine.dependencies import runtime
from plinth.engine.observed_records import SUFFIX, observed_key, read_observed
from plinth.engine.store_errors import storage_error
from plinth.errors import FieldError, NotFound, ServiceUnavailable, ValidationFailed
from plinth.kinds.base import KindSpec
from plinth.kinds.validation import model_errors
from plinth.runtime.observations import ObservationBatch
from plinth.storage.base import Operation, Put, Record, StorageError

#: Attempts per workload before a post gives up on a workload changing under it.
ATTEMPTS = 10


@dataclass
class ReportResult:
    stored: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[str]]:
        return {"stored": self.stored, "unchanged": self.unchanged, "missing": self.missing}


def parse_batch(body: object) -> list[dict[str, Any]]:
    """The observations of a post, as plain documents; ``ValidationFailed`` naming every path."""
    if not isinstance(body, dict):
        raise ValidationFailed([FieldError("", "must be an object with 'workloads'")], "observations")
    try:
        batch = ObservationBatch.model_validate(body)
    except ValidationError as exc:
        raise ValidationFailed(model_errors(exc), "observations") from None
    return [o.model_dump(mode="json") for o in batch.workloads]


def observed_kind(core: EngineCore) -> KindSpec:
    """The kind a runtime runs: the one whose status reads the runtime."""
    found = [k for k in core.kinds.values() if runtime(k) is not None and k.scope != "org"]
    if not found:
        raise NotFound("No kind is run by a runtime here")
    return found[0]


async def store_observations(core: EngineCore, org: str, observations: list[dict[str, Any]]) -> ReportResult:
    """Store each observation with its item's status (module docstring)."""
    kind = observed_kind(core)
    await core.read_container(Address(kind, org, None, ""))  # 404 when the org is gone
    result = ReportResult()
    for observation in observations:
        label = f"{observation['gvc']}/{observation['name']}"
        outcome = await _store_one(core, kind, org, observation)
        getattr(result, outcome).append(label)
    return result


async def _store_one(core: EngineCore, kind: KindSpec, org: str, observation: dict[str, Any]) -> str:
    address = Address(kind, org, observation["gvc"], observation["name"])
    for _ in range(ATTEMPTS):
        try:
            item_record = await core.storage.get(address.key, fresh=True)
            if item_record is None:
                return "missing"
            stored, stored_doc = await read_observed(core.storage, address.key, fresh=True)
            doc = _merged(observation, stored_doc)
            if doc == stored_doc:
                return "unchanged"
            ops: list[Operation] = [_put(address, stored, item_record.id, doc)]
            status = await core.statuses.recomputed_with(kind, org, address.key, address.href, core.clock(), doc)
            if status is not None:
                ops.append(status)
            await core.storage.commit(ops)
            return "stored"
        except StorageError as exc:
            if exc.code == "unavailable":
                raise storage_error(exc, kind.name, observation["name"]) from exc
            continue  # lost a race with a write of the item, or another post: read again
    raise ServiceUnavailable(f"{kind.name} '{observation['name']}' is changing too fast; post again")


def _put(address: Address, stored: Record | None, item_id: str, doc: dict[str, Any]) -> Put:
    key = observed_key(address.key)
    version = stored.version + 1 if stored is not None else 1
    record = Record(key, item_id + SUFFIX, version, orjson.dumps(doc))
    return Put(record, stored.version if stored is not None else None, watched=False)


def _merged(observation: dict[str, Any], stored: dict[str, Any] | None) -> dict[str, Any]:
    """``observation`` with the stored template versions it does not name, for the templates
    still running (see the module docstring)."""
    if not stored:
        return observation
    running = {r["template"] for loc in observation["locations"] for r in loc["replicas"]}
    known = stored.get("versions") or {}
    kept = {t: v for t, v in known.items() if t in running and t not in observation["versions"]}
    return {**observation, "versions": {**kept, **observation["versions"]}}
