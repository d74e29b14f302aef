"""``python -m plinth.runtime.controller``: the runtime controller process.

``plinth serve --runtime containers`` starts it (``cli/store/serve_controller.py``); it can run
on its own too, beside any Plinth server it can reach. Its secrets come as **one JSON line on
stdin**, never on the command line or in the environment::

    {"token": "<a key of the server-admin account>", "hash_key": "<base64 spec-hash key>"}

It then starts Caddy (the gateway, on ``--gateway-listen``, loopback only), the data plane
(``runtime/dataplane``: replica listing, exec sessions and workload logs, on
``--dataplane-listen``, loopback only), the log service (``runtime/logs``: collection into
``{--state-dir}/logs/logs.sqlite3``, each workload bounded by ``--log-retention-bytes``) and
runs a :class:`~.fleet.Fleet`: one control loop per org, found and followed through the API.

It stops on ``SIGTERM``/``SIGINT``, or when its stdin reaches its end (the process that
started it is gone), leaving the containers running for the next controller to adopt; with
``--remove-containers-on-exit`` a ``SIGTERM`` or ``SIGINT`` removes the scope's containers first.
Exit 0 after a stop, 2 on bad arguments or secrets, 3 when the engine or gateway cannot start.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import contextlib
import json
import logging
import signal
import sys
from pathlib import Path

from plinth.runtime.containers import EngineUnavailable, find_engine
from plinth.runtime.controller.fleet import Fleet
from plinth.runtime.dataplane import DataPlane
from plinth.runtime.gateway.caddy import Caddy, GatewayError, loopback_address, reloads_keep_queued_connections
from plinth.runtime.gateway.routes import RouteTable
from plinth.runtime.logs import LogService
from plinth.runtime.logs import add_arguments as add_log_arguments
from plinth.runtime.tasks import cancel_and_wait

log = logging.getLogger("plinth.runtime.controller")
#: The log store's directory under ``--state-dir``.
LOGS_DIR = "logs"


def _label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"'{text}' is not KEY=VALUE")
    return key, value


def _listen(text: str) -> str:
    try:
        return loopback_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m plinth.runtime.controller", description=__doc__.splitlines()[0])
    parser.add_argument("--api", required=True, help="The Plinth server's URL")
    parser.add_argument("--engine", choices=("podman", "docker"), default=None, help="default: podman when found")
    parser.add_argument("--gateway-listen", type=_listen, default="127.0.0.1:8880")
    parser.add_argument("--dataplane-listen", type=_listen, default="127.0.0.1:8881")
    parser.add_argument("--base-domain", default="localhost", help="Workload hosts are {workload}-{alias}.DOMAIN")
    parser.add_argument(
        "--state-dir", type=Path, required=True, help="Where the gateway keeps its files (and the log store, in logs/)"
    )
    parser.add_argument("--label", type=_label, action="append", default=[], help="Extra scope label KEY=VALUE")
    parser.add_argument("--ca-file", default=None, help="CA bundle the server's certificate is checked against")
    parser.add_argument("--remove-containers-on-exit", action="store_true")
    add_log_arguments(parser)
    return parser.parse_args(argv)


def read_secrets(line: str) -> tuple[str, bytes]:
    """``(token, hash key)`` from stdin's first line; ``ValueError`` naming what is wrong (never a value)."""
    try:
        doc = json.loads(line)
        token, hash_key = doc["token"], base64.b64decode(doc["hash_key"], validate=True)
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise ValueError("stdin's first line must be JSON with 'token' and base64 'hash_key'") from None
    if not isinstance(token, str) or not token or len(hash_key) < 16:
        raise ValueError("stdin's 'token' must be a key and 'hash_key' at least 16 bytes")
    return token, hash_key


async def _until_stopped(remove: bool) -> bool:
    """Wait for SIGTERM/SIGINT (``True``: remove per ``remove``) or stdin's end (``False``)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    by_signal = False

    def on_signal() -> None:
        nonlocal by_signal
        by_signal = True
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    reader = asyncio.StreamReader()
    with contextlib.suppress(Exception):  # stdin may not be a pipe (run by hand): signals only then
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

        async def eof() -> None:
            while await reader.read(4096):
                pass
            log.info("stdin closed: the process that started the controller is gone; stopping")
            stop.set()

        watcher = asyncio.create_task(eof())
    await stop.wait()
    with contextlib.suppress(NameError):
        watcher.cancel()
    return by_signal and remove


async def run(
    fleet: Fleet,
    remove: bool,
    dataplane: DataPlane | None = None,
    listen: str = "",
    logs: LogService | None = None,
) -> None:
    if logs is not None:
        await logs.start()
    try:
        if dataplane is not None:
            host, _, port = listen.rpartition(":")
            bound = await dataplane.start(host.strip("[]"), int(port))
            log.info("data plane on http://%s:%d", host, bound)
        try:
            await _run_fleet(fleet, remove)
        finally:
            if dataplane is not None:
                await dataplane.close()
    finally:
        if logs is not None:
            await logs.stop()


async def _run_fleet(fleet: Fleet, remove: bool) -> None:
    task = asyncio.create_task(fleet.run())
    stopped = asyncio.create_task(_until_stopped(remove))
    done, _ = await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    await cancel_and_wait(task)
    if stopped in done and stopped.result():
        removed = await fleet.remove_all()
        log.info("removed %d containers (--remove-containers-on-exit)", removed)
    else:
        stopped.cancel()
    log.info("stopped; containers left running are adopted by the next controller")


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="plinth controller: %(message)s", stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    args = parse(argv)
    try:
        token, hash_key = read_secrets(sys.stdin.readline())
    except ValueError as exc:
        log.error("%s", exc)
        return 2
    try:
        driver = find_engine(args.engine, hash_key=hash_key)
    except EngineUnavailable as exc:
        log.error("no container engine: %s", exc)
        return 3
    # Started from the main thread, so that Caddy dies with this process even if it is killed.
    caddy = Caddy(args.state_dir, die_with_parent=True)
    try:
        caddy.start()
    except GatewayError as exc:
        log.error("the gateway did not start: %s", exc)
        return 3
    keeps = reloads_keep_queued_connections()
    log.info(
        "engine %s; gateway (Caddy) on http://%s; reloads keep queued connections: %s",
        driver.name,
        args.gateway_listen,
        {True: "yes", False: "no (set net.ipv4.tcp_migrate_req=1)", None: "unknown (no tcp_migrate_req)"}[keeps],
    )

    async def gateway(table: RouteTable) -> None:
        await caddy.apply(table, args.gateway_listen)

    scope = dict(args.label)
    # Collected here, where the engine is; served by the data plane, dropped by the fleet's loops.
    logs = LogService(driver, args.state_dir / LOGS_DIR, scope=scope, retention_bytes=args.log_retention_bytes)
    fleet = Fleet(
        args.api,
        token,
        driver,
        labels=dict(args.label),
        gateway=gateway,
        base_domain=args.base_domain,
        verify=args.ca_file or True,
        logs=logs,
    )
    dataplane = DataPlane(args.api, driver, scope, verify=args.ca_file or True, logs=logs)
    try:
        asyncio.run(run(fleet, args.remove_containers_on_exit, dataplane, args.dataplane_listen, logs))
    finally:
        caddy.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
