"""The workload's cross-field rules (docs.controlplane.com/reference/workload/types and beyond): every problem at once.

``validate_workload`` is the kind's ``validate`` hook. It reports, each at its JSON path:

- ``type: vm``: not served yet (400), and a ``vm`` block on any other type
  (docs.controlplane.com/reference/workload/vm);
- ``job`` exactly when the type is ``cron`` (TF requires it there; it means nothing elsewhere);
- ``localOptions`` on cron is accepted, though docs.controlplane.com/reference/workload/types
  says a cron job runs in every location alike: the vendor's template catalog suspends its
  backup crons in ``defaultOptions`` and un-suspends one location in ``localOptions``
  (controlplane-com/templates, e.g. cockroach/versions/1.4.1/templates/workload-backup.yaml;
  docs/validation-audit.md). ``defaultOptions`` is allowed on cron too: TF's tests create cron
  workloads with it, and the CLI suspends cron through it;
- ``localOptions``: each location once, compared by the last path segment (a name and a
  link to the same location are the same location);
- the options matrix (``option_rules``);
- ``loadBalancer.replicaDirect`` only on stateful; ``geoLocation`` enabled needs at least
  one header, and header names are distinct (HTTP header names ignore case);
- ``rolloutOptions``: ``maxUnavailableReplicas`` and ``maxSurgeReplicas`` not both zero (the
  rollout could never move), except on stateful, where ``maxUnavailableReplicas`` is stored
  but means nothing (only the TF provider refuses it there, client-side; the vendor's stateful
  examples send it and apply, docs/validation-audit.md); a grace period above 900 s only with
  the tag ``cpln/relaxGracePeriodMax`` (TF, AI);
- ``firewallConfig`` header filters: exactly one of ``allowedValues``, ``blockedValues``;
- the containers' own rules (``containers.container_errors``).

:func:`workload_name_rule` is the kind's name rule, for the integration to wire.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext, default_name_rule
from plinth.kinds.workload.containers import container_errors
from plinth.kinds.workload.option_rules import options_errors
from plinth.kinds.workload.rollout import GRACE_PERIOD_MAX, RELAX_GRACE_PERIOD_TAG

#: A workload's name is at most 49 characters and does not end in ``-headless`` (AI): the
#: platform derives longer names from it, and ``-headless`` names its headless service.
NAME_MAX = 49
HEADLESS_SUFFIX = "-headless"


def workload_name_rule(name: str) -> str | None:
    """The common name rule, at most 49 characters, not ending in ``-headless``; else ``None``."""
    problem = default_name_rule(name)
    if problem:
        return problem
    if len(name) > NAME_MAX:
        return f"must be at most {NAME_MAX} characters"
    if name.endswith(HEADLESS_SUFFIX):
        return f"must not end with '{HEADLESS_SUFFIX}'"
    return None


def _type_errors(spec: dict[str, Any]) -> Iterator[FieldError]:
    workload_type = spec["type"]
    if workload_type == "vm":
        yield FieldError("spec.type", "'vm' workloads are not served by Plinth yet")
    elif "vm" in spec:
        yield FieldError("spec.vm", "is only allowed on a vm workload")
    if workload_type == "cron" and "job" not in spec:
        yield FieldError("spec.job", "is required on a cron workload")
    elif workload_type != "cron" and "job" in spec:
        yield FieldError("spec.job", "is only allowed on a cron workload")


def _location_name(location: str) -> str:
    return location.rstrip("/").rsplit("/", 1)[-1]


def _location_errors(spec: dict[str, Any]) -> Iterator[FieldError]:
    first: dict[str, int] = {}
    for index, local in enumerate(spec.get("localOptions") or []):
        name = _location_name(local["location"])
        if name in first:
            yield FieldError(
                f"spec.localOptions[{index}].location",
                f"'{name}' already has options at localOptions[{first[name]}]",
            )
        first.setdefault(name, index)


def _load_balancer_errors(spec: dict[str, Any]) -> Iterator[FieldError]:
    balancer = spec.get("loadBalancer") or {}
    if balancer.get("replicaDirect") and spec["type"] != "stateful":
        yield FieldError("spec.loadBalancer.replicaDirect", "is only allowed on a stateful workload")
    geo = balancer.get("geoLocation") or {}
    headers: dict[str, str] = geo.get("headers") or {}
    if geo.get("enabled") and not headers:
        yield FieldError("spec.loadBalancer.geoLocation.headers", "needs at least one header when enabled")
    seen: dict[str, str] = {}
    for field, header in headers.items():
        if header.lower() in seen:
            yield FieldError(
                f"spec.loadBalancer.geoLocation.headers.{field}",
                f"'{header}' is already the {seen[header.lower()]} header",
            )
        seen.setdefault(header.lower(), field)


def _is_zero(count: str | None) -> bool:
    return count is not None and int(count.rstrip("%")) == 0


def _tag_set(tags: dict[str, Any], key: str) -> bool:
    return key in tags and tags[key] not in (False, "false", None)


def _rollout_errors(spec: dict[str, Any], tags: dict[str, Any]) -> Iterator[FieldError]:
    rollout = spec.get("rolloutOptions")
    if rollout is None:
        return
    unavailable = rollout.get("maxUnavailableReplicas")
    # On stateful the value is stored as sent and means nothing, so it cannot stall a rollout.
    if spec["type"] != "stateful" and _is_zero(unavailable) and _is_zero(rollout.get("maxSurgeReplicas")):
        yield FieldError("spec.rolloutOptions.maxUnavailableReplicas", "must not be 0 when maxSurgeReplicas is 0 too")
    grace = rollout.get("terminationGracePeriodSeconds", 0)
    if grace > GRACE_PERIOD_MAX and not _tag_set(tags, RELAX_GRACE_PERIOD_TAG):
        yield FieldError(
            "spec.rolloutOptions.terminationGracePeriodSeconds",
            f"must be at most {GRACE_PERIOD_MAX} unless the workload is tagged {RELAX_GRACE_PERIOD_TAG}",
        )


def _firewall_errors(spec: dict[str, Any]) -> Iterator[FieldError]:
    http = (spec.get("firewallConfig") or {}).get("external", {}).get("http") or {}
    for index, header_filter in enumerate(http.get("inboundHeaderFilter") or []):
        given = [name for name in ("allowedValues", "blockedValues") if name in header_filter]
        if len(given) != 1:
            yield FieldError(
                f"spec.firewallConfig.external.http.inboundHeaderFilter[{index}]",
                "must set exactly one of allowedValues and blockedValues",
            )


def validate_workload(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """Every rule violation of a schema-valid workload, each at its JSON path; never raises."""
    spec = item["spec"]
    errors = [
        *_type_errors(spec),
        *_location_errors(spec),
        *options_errors(spec, ctx),
        *_load_balancer_errors(spec),
        *_rollout_errors(spec, item.get("tags") or {}),
        *_firewall_errors(spec),
    ]
    errors += container_errors(item, ctx)
    return errors
