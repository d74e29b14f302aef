"""Facts about the host, printed above the tables and kept in the JSON: figures mean little
without the core count and what else was running."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "absent"


def _wrk_version(wrk: str) -> str:
    done = subprocess.run([wrk, "-v"], capture_output=True, text=True, check=False, timeout=10)
    first = (done.stdout or done.stderr).splitlines()
    return first[0].split(" [")[0] if first else "unknown"


def facts(wrk: str) -> dict[str, str]:
    return {
        "nproc": str(len(os.sched_getaffinity(0))),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "uvicorn": _version("uvicorn"),
        "uvloop": _version("uvloop"),
        "httptools": _version("httptools"),
        "wrk": _wrk_version(wrk),
        "loadavg_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def describe(f: dict[str, str]) -> str:
    return (
        f"Machine: {f['nproc']} cores ({f['cpu']}), Python {f['python']}, uvicorn {f['uvicorn']} "
        f"(uvloop {f['uvloop']}, httptools {f['httptools']}), {f['wrk']}; load average at start {f['loadavg_at_start']}"
    )
