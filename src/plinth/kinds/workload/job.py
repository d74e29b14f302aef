"""``job`` (types-ts cronjob.ts): when and how a ``cron`` workload runs.

``schedule`` is a Kubernetes CronJob schedule (``cron.kubernetes_schedule_problem``: the
full 5-field syntax and the ``@hourly``-style macros). The other fields take the API's
defaults (TS, TF, DOCS) inside the block a client sends: ``concurrencyPolicy: Forbid``,
``historyLimit: 5``, ``restartPolicy: Never``; ``activeDeadlineSeconds`` stays unset (no
deadline). That ``job`` is present exactly when the type is ``cron`` is a rule (``rules``).

``concurrencyPolicy`` takes ``Allow`` too: TS and the CLI's ``--set`` choices are older (TF,
DOCS, and the CLI's own ``cron run`` body send ``Allow``). ``suspend`` is accepted as DOCS
types.mdx describe it, though TS and TF lack it; clients suspend a cron workload
through ``defaultOptions.suspend``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from plinth.kinds.cron import check_kubernetes_schedule
from plinth.kinds.spec_model import SpecModel


class WorkloadJob(SpecModel):
    schedule: Annotated[str, AfterValidator(check_kubernetes_schedule)]
    concurrencyPolicy: Literal["Forbid", "Replace", "Allow"] = "Forbid"
    historyLimit: Annotated[int, Field(ge=1, le=10)] = 5
    restartPolicy: Literal["OnFailure", "Never"] = "Never"
    activeDeadlineSeconds: Annotated[int, Field(ge=1, le=86400)] | None = None
    suspend: bool | None = None
