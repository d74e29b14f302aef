"""How much CPU other processes took during a figure: this machine is shared, and a figure
measured while something else ran is worth less. Read from /proc, in cores (1.0 = one core
busy for the whole run)."""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _busy_ticks() -> int:
    """User and system jiffies of all CPUs since boot, plus steal (a busy hypervisor neighbour).

    irq and softirq are left out: loopback TCP is processed mostly in softirq, charged to no
    process, so at 20,000 requests a second it would read as someone else's load."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, _irq, _softirq, steal = fields[:8]
    return user + nice + system + steal


def _our_ticks(pgid: int, database: str | None) -> int:
    """utime + stime of the server: every live process in process group ``pgid`` (a uvicorn
    supervisor and its workers) and, on PostgreSQL, the backends serving ``database``."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            fields = stat[stat.rfind(")") + 2 :].split()
            ours = int(fields[2]) == pgid
            if not ours and database and "(postgres)" in stat:
                # A backend's title: "postgres: <user> <database> <client> <state>".
                title = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                ours = f" {database} " in title
        except OSError:
            continue
        if ours:
            total += int(fields[11]) + int(fields[12])
    return total


def _children_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Snapshot:
    at: float
    busy: int
    server: int
    children_s: float
    own_s: float


def snapshot(server_pgid: int, database: str | None = None) -> Snapshot:
    server = _our_ticks(server_pgid, database)
    return Snapshot(time.monotonic(), _busy_ticks(), server, _children_seconds(), time.process_time())


def other_cores(before: Snapshot, after: Snapshot) -> float:
    """Cores used by anything but the server (with its PostgreSQL backends), the bench's reaped children
    (wrk, waited for between the snapshots) and the bench itself."""
    elapsed = after.at - before.at
    if elapsed <= 0:
        return 0.0
    busy_s = (after.busy - before.busy) / TICKS
    server_s = (after.server - before.server) / TICKS
    ours_s = (after.children_s - before.children_s) + (after.own_s - before.own_s)
    return max(0.0, (busy_s - server_s - ours_s) / elapsed)


@dataclass
class Settle:
    """Waiting for other processes to quiet down before a figure, within a budget for the run.

    The probe runs while the server is idle, so everything busy is someone else's."""

    budget_s: float
    threshold_cores: float = 0.25
    probe_s: float = 1.0
    waited_s: float = 0.0

    def wait(self, server_pgid: int, database: str | None = None) -> float:
        """Probe until the other load is under the threshold or the budget is spent; the last load."""
        while True:
            before = snapshot(server_pgid, database)
            time.sleep(self.probe_s)
            load = other_cores(before, snapshot(server_pgid, database))
            if load < self.threshold_cores or self.waited_s >= self.budget_s:
                return load
            self.waited_s += self.probe_s


def process_ticks(pid: int) -> int:
    """utime + stime of one process (0 once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])


#: A run is lopsided when its least busy worker used less than this share of the busiest's CPU.
LOPSIDED_SHARE = 0.25


def lopsided(before: dict[int, int], after: dict[int, int]) -> bool:
    """Whether one worker did (nearly) all the work while another idled.

    wrk opens its few connections once, and the kernel hands each to whichever worker accepts
    first, so all of them now and then land on one worker: that run measures one worker, not
    the server."""
    used = [after.get(pid, 0) - ticks for pid, ticks in before.items()]
    if len(used) < 2 or max(used) <= 0:
        return False
    return min(used) < LOPSIDED_SHARE * max(used)
