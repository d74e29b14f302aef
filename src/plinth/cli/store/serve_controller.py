"""``plinth serve --runtime containers``: start the runtime controller and keep it running.

The controller is a process of its own (``python -m plinth.runtime.controller``), a client of
this server's public API (docs/runtime.md, "The controller process"). ``plinth serve``'s main
process runs a :class:`ControllerSupervisor` thread that:

1. **takes the store's controller lock** (``storage/exclusive.py``), so several workers or
   replicas of one store run one controller; a replica that does not get it tries again every
   :data:`LOCK_RETRY_S` and takes over when the holder dies;
2. **mints a key** of the service account that holds the server-admin right (a key of it acts
   in every org), drops the keys earlier controllers of this store left behind (whoever holds
   the lock is the only legitimate controller), and reads the spec-hash key (below);
3. **starts the controller**, giving it the key and the spec-hash key as one JSON line on its
   stdin: never on its command line, in its environment or in a file. Its stdin stays open;
   when this process dies however it dies, the pipe closes and the controller stops;
4. **restarts it** with a back-off (1 s doubling to 30 s) when it dies, and stops it
   (``SIGTERM``) when the server stops, then revokes the key and lets go of the lock.

**The store's label.** Every container the controller makes carries ``plinth.store={id}``, a
random id made once and kept in the store's meta, and the controller only ever touches
containers carrying it (with the ``--container-label`` ones): two Plinth installations on one
machine, or a test's servers, never collect each other's containers, even for orgs of the same
name or orgs one of them does not know.

**The spec-hash key** (``plinth.spec-hash`` labels are an HMAC under it) must be the same for
every controller of the store, across restarts and replicas, or nothing would be adopted: it is
made once, kept in the store's meta **sealed** with the secrets key (never in the clear;
``engine/sealed_meta.py``: ``plinth secrets reseal`` and ``status`` include it).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from plinth.server.settings import Settings

if TYPE_CHECKING:
    from plinth.engine.service import Engine
    from plinth.storage.base import Storage
    from plinth.storage.exclusive import Exclusive

#: The spec-hash key's name among the store's sealed meta values (``engine/sealed_meta.py``).
HASH_KEY = "runtime.controller.hash-key"
STORE_ID_META = "runtime.controller.store-id"
#: The label naming the store a container belongs to: always part of the controller's scope.
STORE_LABEL = "plinth.store"
LOCK_NAME = "plinth-runtime-controller"
#: Descriptions of the keys minted for controllers start with this (stale ones are dropped).
KEY_DESCRIPTION = "runtime controller"
LOCK_RETRY_S = 2.0
RESTART_MIN_S, RESTART_MAX_S = 1.0, 30.0
#: How long a stopping controller may take (removing containers with --remove-containers-on-exit).
STOP_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ControllerOptions:
    """What ``plinth serve`` passes on to the controller (its command-line options)."""

    engine: str | None = None
    gateway_listen: str = "127.0.0.1:8880"
    dataplane_listen: str = "127.0.0.1:8881"
    labels: dict[str, str] = field(default_factory=dict)
    remove_on_exit: bool = False
    #: ``--log-retention-bytes``: the controller's own default when ``None``.
    log_retention_bytes: int | None = None


_said: list[str] = []


def say(message: str, once: bool = False) -> None:
    """A line on stderr; with ``once``, not again while it is the last thing said (retries)."""
    if once and _said[-1:] == [message]:
        return
    _said[:] = [message]
    click.echo(f"plinth: runtime controller: {message}", err=True)


async def _open(settings: Settings) -> tuple[Storage, Engine]:
    from plinth.engine.service import Engine
    from plinth.kinds import REGISTRY
    from plinth.sealing import Sealer
    from plinth.storage import open_storage

    storage = await open_storage(settings.database_url, settings.data_dir)
    return storage, Engine(storage, REGISTRY, sealer=Sealer(settings.secrets_keys().source))


def account_of(link: str) -> tuple[str, str]:
    """``(org, name)`` of a service account link ``/org/{org}/serviceaccount/{name}``."""
    parts = link.strip("/").split("/")
    if len(parts) != 4 or parts[0] != "org" or parts[2] != "serviceaccount":
        raise RuntimeError(f"unexpected server-admin link {link!r}")
    return parts[1], parts[3]


@dataclass(frozen=True)
class Prepared:
    """What a controller start needs from the store."""

    holder: str  # the server-admin account's link
    key_name: str
    key: str
    hash_key: bytes
    store_id: str


async def prepare(settings: Settings) -> Prepared:
    """Mint the controller's key, read the spec-hash key and the store's id (made on first use)."""
    from plinth.auth.authn import SERVER_ADMIN_META
    from plinth.auth.signing import SigningKey, ensure_signing_key, load_key
    from plinth.engine import sealed_meta
    from plinth.engine.action_context import EngineActionContext
    from plinth.engine.requestinfo import RequestInfo
    from plinth.engine.service import SYSTEM
    from plinth.kinds.serviceaccount import add_key
    from plinth.storage.base import SetMeta

    storage, engine = await _open(settings)
    try:
        holder = await storage.get_meta(SERVER_ADMIN_META)
        if not holder:
            raise RuntimeError("the store has no server-admin account yet (it is not bootstrapped)")
        org, name = account_of(holder)
        sealer = engine.sealer
        if sealer is None:
            raise RuntimeError("no secrets key to seal the spec-hash key with")
        await storage.commit([SetMeta(STORE_ID_META, secrets.token_hex(8), only_if_absent=True)])
        store_id = str(await storage.get_meta(STORE_ID_META))
        hash_key = await sealed_meta.get_or_create(storage, sealer, HASH_KEY, lambda: secrets.token_bytes(32))

        kid = await ensure_signing_key(storage, sealer)
        signing = await load_key(storage, sealer, kid)
        assert signing is not None

        async def current() -> SigningKey:
            return signing

        account = RequestInfo(kind="serviceaccount", org=org, name=name)
        doc = json.loads(await engine.get(account))
        stale = [k["name"] for k in doc.get("keys", []) if str(k.get("description", "")).startswith(KEY_DESCRIPTION)]
        if stale:
            await engine.patch(account, {"$drop/keys": stale})
        body = {"description": f"{KEY_DESCRIPTION} ({socket.gethostname()}, pid {os.getpid()})"}
        minted = (await add_key(EngineActionContext(engine, account, SYSTEM, body=body, signing=current))).body
        return Prepared(holder, str(minted["name"]), str(minted["key"]), hash_key, store_id)
    finally:
        await storage.close()


async def revoke(settings: Settings, holder: str, key_name: str) -> None:
    """Drop the controller's key from the server-admin account."""
    from plinth.engine.requestinfo import RequestInfo

    org, name = account_of(holder)
    storage, engine = await _open(settings)
    try:
        await engine.patch(RequestInfo(kind="serviceaccount", org=org, name=name), {"$drop/keys": [key_name]})
    finally:
        await storage.close()


def gateway_base_domain(base_domain: str) -> str:
    """The gateway serves workload hosts under ``--base-domain``, or ``localhost`` (which
    resolves here) while it is the platform's own default."""
    from plinth.kinds.base import DEFAULT_BASE_DOMAIN

    return "localhost" if base_domain == DEFAULT_BASE_DOMAIN else base_domain


def controller_argv(settings: Settings, options: ControllerOptions, store_id: str) -> list[str]:
    argv = [sys.executable, "-m", "plinth.runtime.controller", "--api", settings.public_base()]
    if settings.public_url:  # the controller talks to this process, not through a proxy
        argv[-1] = Settings(host=settings.host, port=settings.port, tls_cert=settings.tls_cert).public_base()
    argv += ["--gateway-listen", options.gateway_listen, "--base-domain", gateway_base_domain(settings.base_domain)]
    argv += ["--dataplane-listen", options.dataplane_listen]
    argv += ["--state-dir", str(Path(settings.data_dir).resolve() / "gateway")]
    if options.engine:
        argv += ["--engine", options.engine]
    if settings.tls_cert:
        argv += ["--ca-file", str(settings.tls_cert)]
    for key, value in sorted({**options.labels, STORE_LABEL: store_id}.items()):
        argv += ["--label", f"{key}={value}"]
    if options.remove_on_exit:
        argv.append("--remove-containers-on-exit")
    if options.log_retention_bytes is not None:
        argv += ["--log-retention-bytes", str(options.log_retention_bytes)]
    return argv


class ControllerSupervisor(threading.Thread):
    """The thread of ``plinth serve`` that runs the controller (module docstring)."""

    def __init__(self, settings: Settings, options: ControllerOptions) -> None:
        super().__init__(name="plinth-controller-supervisor", daemon=True)
        self.settings, self.options = settings, options
        self._stopping = threading.Event()
        self._process: subprocess.Popen[bytes] | None = None

    def stop(self) -> None:
        """Stop the controller (and this thread), revoke its key, let go of the lock."""
        self._stopping.set()
        self.join(STOP_TIMEOUT_S + 15)

    def run(self) -> None:
        asyncio.run(self._main())

    async def _sleep(self, seconds: float) -> bool:
        """Wait, waking early when told to stop; ``True`` once stopping."""
        await asyncio.to_thread(self._stopping.wait, seconds)
        return self._stopping.is_set()

    async def _main(self) -> None:
        from plinth.storage.exclusive import exclusive

        lock = exclusive(self.settings.database_url, self.settings.data_dir, LOCK_NAME)
        told = False
        while not self._stopping.is_set():
            if not await lock.try_acquire():
                if not told:
                    say("another process of this store runs it (or the store is unreachable); waiting to take over")
                    told = True
                if await self._sleep(LOCK_RETRY_S):
                    break
                continue
            told = False
            say("holding the store's controller lock")
            try:
                await self._hold(lock)
            finally:
                await lock.release()

    async def _hold(self, lock: Exclusive) -> None:
        """Run the controller while the lock is held; the key is revoked on the way out."""
        try:
            prepared = await prepare(self.settings)
        except Exception as exc:  # the store is unreachable, or not bootstrapped yet: retry
            say(f"cannot start yet ({exc}); retrying", once=True)
            await self._sleep(LOCK_RETRY_S)
            return
        secret = {"token": prepared.key, "hash_key": base64.b64encode(prepared.hash_key).decode()}
        secret_line = json.dumps(secret).encode() + b"\n"
        backoff = RESTART_MIN_S
        try:
            while not self._stopping.is_set():
                self._start(secret_line, prepared.store_id)
                while not self._stopping.is_set():
                    if await self._sleep(1.0):
                        break
                    if self._process is not None and self._process.poll() is not None:
                        break
                    if not await lock.still_held():
                        say("lost the store's controller lock; stopping the controller")
                        return
                if self._stopping.is_set():
                    return
                code = self._process.returncode if self._process else None
                say(f"the controller exited ({code}); restarting in {backoff:g} s")
                if await self._sleep(backoff):
                    return
                backoff = min(backoff * 2, RESTART_MAX_S)
        finally:
            await asyncio.to_thread(self._terminate)
            try:
                await revoke(self.settings, prepared.holder, prepared.key_name)
            except Exception as exc:
                say(f"could not revoke its key {prepared.key_name} ({exc}); the next controller drops it")

    def _start(self, secret_line: bytes, store_id: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}  # no secrets key
        self._process = subprocess.Popen(
            controller_argv(self.settings, self.options, store_id),
            stdin=subprocess.PIPE,
            env=env,
            start_new_session=True,  # only this thread signals it (a terminal's Ctrl-C reaches serve)
        )
        assert self._process.stdin is not None
        self._process.stdin.write(secret_line)
        self._process.stdin.flush()  # kept open: its end tells the controller that serve is gone
        say(f"started (pid {self._process.pid})")

    def _terminate(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdin is not None:
            process.stdin.close()
