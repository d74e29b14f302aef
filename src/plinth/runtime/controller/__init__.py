"""The runtime controller: what should run (``plan``) and making the engine match it
(``reconcile``), through the driver seam of ``runtime.containers``. Not yet wired into
``plinth serve`` (docs/runtime.md, "Containers and the gateway")."""

from __future__ import annotations

from plinth.runtime.controller.plan import CONTAINER, REPLICA, TYPE, plan_workload, slot_name
from plinth.runtime.controller.reconcile import ReconcileReport, engine_name, reconcile

__all__ = ["CONTAINER", "REPLICA", "TYPE", "ReconcileReport", "engine_name", "plan_workload", "reconcile", "slot_name"]
