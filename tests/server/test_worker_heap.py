"""A served worker freezes what its start-up allocated, out of the cyclic collector's full
passes (``server/app.py``, ``_settle_heap``); an app built directly, as tests do, does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: Run in a process of its own: start the app ``plinth serve``'s workers run, report the heap.
START_WORKER_APP = """
import asyncio, gc
from plinth.server.app import PlinthApp, create_app
from plinth.server.settings import Settings

async def main():
    assert PlinthApp(Settings.from_env()).settle_heap is False
    app = create_app()
    assert gc.get_freeze_count() == 0
    await app.startup()
    try:
        print("frozen", gc.get_freeze_count())
    finally:
        await app.shutdown()

asyncio.run(main())
"""


def test_a_served_worker_freezes_its_start_up_heap(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    env.update({"PLINTH_DATA_DIR": str(tmp_path / "data"), "PLINTH_ORG": "acme"})
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", START_WORKER_APP], env=env, cwd=repo, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    frozen = int(done.stdout.split("frozen", 1)[1].split()[0])
    assert frozen > 10_000  # the modules, kinds and schemas: tens of thousands of objects
