"""The runtime controller: what should run (``plan``), making the engine match it
(``reconcile``) through the driver seam of ``runtime.containers``, the API's view kept by
list and watch (``informer``), the loop that ties them (``loop``), what it observed posted to
the API (``reporter``), the commands it takes (``commands``), one loop per org (``fleet``) and
the process ``plinth serve --runtime containers`` starts (``__main__``; docs/runtime.md, "The
controller process")."""

from __future__ import annotations

from plinth.runtime.controller.informer import Informer, gvc_locations
from plinth.runtime.controller.loop import ControlLoop, SecretUnavailable, refuse_secrets
from plinth.runtime.controller.plan import CONTAINER, REPLICA, TYPE, plan_workload, slot_name
from plinth.runtime.controller.reconcile import ReconcileReport, engine_name, reconcile

__all__ = [
    "CONTAINER",
    "REPLICA",
    "TYPE",
    "ControlLoop",
    "Informer",
    "ReconcileReport",
    "SecretUnavailable",
    "engine_name",
    "gvc_locations",
    "plan_workload",
    "reconcile",
    "refuse_secrets",
    "slot_name",
]
