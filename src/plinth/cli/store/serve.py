"""``plinth serve``: bind the port, bootstrap the store once, then run uvicorn with N worker processes.

The port is bound first: a port in use fails the start (exit 4, one line) before the store is
touched or anything is announced; a store a newer Plinth has migrated fails it too (exit 5),
untouched (``cli/errors.py``).

A PostgreSQL store that cannot be reached at start is not fatal: the server starts not ready
and its workers open (and if need be bootstrap) the store when it answers (``server/app.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from plinth.cli.store.serve_containers import (
    container_options,
    controller_options,
    dataplane_url,
    workload_endpoints,
)
from plinth.cli.store.serve_controller import ControllerOptions
from plinth.cli.store.serve_watch import watch_options
from plinth.cli.store.transfer import secrets_key_file_option
from plinth.kinds.base import DEFAULT_BASE_DOMAIN
from plinth.server.settings import RATE_BURST, RATE_LIMIT, REQUEST_TIMEOUT_S, SHUTDOWN_GRACE_S, Settings


async def bootstrap(settings: Settings) -> tuple[str | None, str]:
    """Migrate the store; on an empty store create the org, its built-ins and the admin key;
    give existing orgs the built-ins they lack (``ensure_builtins``)."""
    from plinth.engine.service import Engine
    from plinth.kinds import REGISTRY
    from plinth.sealing import Sealer
    from plinth.server import bootstrap as first_start
    from plinth.storage import open_storage

    storage = await open_storage(settings.database_url, settings.data_dir)
    try:
        engine = Engine(storage, REGISTRY, sealer=Sealer(settings.secrets_keys().source))
        key = await first_start.bootstrap(engine, storage, settings.org)
        if key is not None:
            first_start.write_key_file(settings.data_dir, key)
        await first_start.ensure_builtins(engine, storage)
        await first_start.prepare_signing(engine, storage)
        return key, await storage.get_meta(first_start.ORG_META) or settings.org
    finally:
        await storage.close()


def _bootstrap_or_wait(settings: Settings) -> tuple[str | None, str, bool]:
    """``bootstrap``, or ``(None, org, True)`` when a PostgreSQL store is unreachable for now."""
    from plinth.auth.signing import SigningKeyError
    from plinth.cli.errors import StoreTooNew
    from plinth.storage.base import StorageError
    from plinth.storage.migrate import StoreTooNew as Newer

    try:
        key, org = asyncio.run(bootstrap(settings))
    except Newer as exc:
        raise StoreTooNew(str(exc)) from exc
    except SigningKeyError as exc:
        raise click.ClickException(f"cannot start: {exc}") from exc
    except StorageError as exc:
        if exc.code != "unavailable" or settings.store_name != "postgresql":
            raise
        click.echo(f"plinth: the database is not reachable ({exc}); starting not ready, retrying until it is", err=True)
        return None, settings.org, True
    return key, org, False


def _open_secrets_keys(settings: Settings) -> str | None:
    """Check the secrets keys before anything starts (and make a SQLite store's first key, so
    every worker finds the same file); the line to tell the operator, if any."""
    from plinth.sealing import KeyConfigError

    try:
        return settings.secrets_keys().note
    except KeyConfigError as exc:
        raise click.ClickException(f"cannot start: {exc}") from exc


def _announce(settings: Settings, key: str | None, org: str, waiting: bool = False, note: str | None = None) -> str:
    scheme = "https" if settings.tls_cert else "http"
    endpoint = f"{scheme}://{settings.host}:{settings.port}"
    where = "PostgreSQL" if settings.store_name == "postgresql" else f"SQLite in {settings.data_dir}"
    key_file = settings.data_dir / "bootstrap-admin.key"
    lines = [f"Plinth serving {endpoint} (store: {where}, org: {org}, workers: {settings.workers})"]
    if waiting:
        lines.append("Not ready: /readyz answers 503 until the database is reachable")
    if key is not None:
        lines += [f"Admin key (shown once; also written to {key_file}):", f"  {key}"]
    elif key_file.exists():
        lines.append(f"Admin key: see {key_file}")
    if settings.console:
        lines.append(f"Console: {endpoint}/console (sign in with the admin key)")
    if note:
        lines.append(note)
    click.echo("\n".join(lines))
    sys.stdout.flush()
    return endpoint


@click.command("serve")
@click.option("--host", envvar="PLINTH_HOST", default="127.0.0.1", show_default=True)
@click.option("--port", envvar="PLINTH_PORT", type=int, default=8080, show_default=True)
@click.option("--data-dir", envvar="PLINTH_DATA_DIR", type=click.Path(path_type=Path), default=Path(".plinth-data"))
@click.option("--database-url", envvar="PLINTH_DATABASE_URL", help="postgresql://... selects PostgreSQL")
@click.option("--workers", envvar="PLINTH_WORKERS", type=int, default=1, show_default=True)
@click.option("--tls-cert", envvar="PLINTH_TLS_CERT", type=click.Path(exists=True, dir_okay=False))
@click.option("--tls-key", envvar="PLINTH_TLS_KEY", type=click.Path(exists=True, dir_okay=False))
@click.option("--org", envvar="PLINTH_ORG", default="default", show_default=True, help="The org created on first start")
@click.option("--access-log/--no-access-log", envvar="PLINTH_ACCESS_LOG", default=True, show_default=True)
@click.option("--oidc-issuer", envvar="PLINTH_OIDC_ISSUER", help="OpenID Connect issuer URL users sign in with")
@click.option("--oidc-audience", envvar="PLINTH_OIDC_AUDIENCE", help="The client id ID tokens must be for")
@click.option(
    "--oidc-jwks-file",
    envvar="PLINTH_OIDC_JWKS_FILE",
    type=click.Path(exists=True, dir_okay=False),
    help="The issuer's keys as a JWKS file, instead of fetching them",
)
@click.option(
    "--request-timeout",
    envvar="PLINTH_REQUEST_TIMEOUT",
    type=click.FloatRange(min=0),
    default=REQUEST_TIMEOUT_S,
    show_default=True,
    help="Seconds a request's headers, then its body, may take to arrive (408 after; 0: no limit)",
)
@click.option(
    "--rate-limit",
    envvar="PLINTH_RATE_LIMIT",
    type=click.FloatRange(min=0),
    default=RATE_LIMIT,
    show_default=True,
    help="Requests per second per principal, per process (429 past it; 0 disables)",
)
@click.option(
    "--rate-burst",
    envvar="PLINTH_RATE_BURST",
    type=click.IntRange(min=1),
    default=RATE_BURST,
    show_default=True,
    help="Requests a principal may make at once before --rate-limit applies",
)
@click.option(
    "--runtime",
    envvar="PLINTH_RUNTIME",
    type=click.Choice(["simulated", "none", "containers"]),
    default="simulated",
    show_default=True,
    help="What runs workloads: simulated (every deployment ready at once), none (nothing runs) or "
    "containers (status and deployments as the runtime controller reports them)",
)
@click.option(
    "--base-domain",
    envvar="PLINTH_BASE_DOMAIN",
    default=DEFAULT_BASE_DOMAIN,
    show_default=True,
    help="Public base domain of generated host names (workload endpoints, domain DNS targets)",
)
@click.option(
    "--public-url",
    envvar="PLINTH_PUBLIC_URL",
    default=None,
    help="URL clients reach the server at, e.g. https://api.example.com (what /discovery answers; "
    "default: the listen address)",
)
@secrets_key_file_option(
    "Keys that seal secrets, one base64 key a line, the last one sealing (or PLINTH_SECRETS_KEY: one key). "
    "Default on SQLite: secrets.key in --data-dir, made on first start; PostgreSQL needs one"
)
@click.option(
    "--shutdown-grace",
    envvar="PLINTH_SHUTDOWN_GRACE",
    type=click.IntRange(min=0),
    default=SHUTDOWN_GRACE_S,
    show_default=True,
    help="On SIGTERM: seconds in-flight requests may take to finish before they are cut off (exit 0 after)",
)
@click.option(
    "--metrics-token-file",
    envvar="PLINTH_METRICS_TOKEN_FILE",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="/metrics answers scrapes that send this file's contents as a bearer token (default: none may)",
)
@click.option(
    "--metrics-public",
    envvar="PLINTH_METRICS_PUBLIC",
    is_flag=True,
    default=False,
    help="Serve /metrics without a token, to anyone who can reach the port",
)
@watch_options
@container_options
@click.option(
    "--console/--no-console",
    envvar="PLINTH_CONSOLE",
    default=True,
    show_default=True,
    help="Serve the web console at /console (it signs in with a service account key)",
)
@click.option("--init-profile", default=None, help="Create this CLI profile for the server when no profile exists")
def serve_command(
    host: str,
    port: int,
    data_dir: Path,
    database_url: str | None,
    workers: int,
    tls_cert: str | None,
    tls_key: str | None,
    org: str,
    access_log: bool,
    oidc_issuer: str | None,
    oidc_audience: str | None,
    oidc_jwks_file: str | None,
    request_timeout: float,
    rate_limit: float,
    rate_burst: int,
    runtime: str,
    base_domain: str,
    public_url: str | None,
    secrets_key_file: Path | None,
    shutdown_grace: int,
    metrics_token_file: Path | None,
    metrics_public: bool,
    console: bool,
    init_profile: str | None,
    **more: Any,
) -> None:
    """Run the API server (SQLite in --data-dir unless --database-url names PostgreSQL)."""
    if bool(tls_cert) != bool(tls_key):
        raise click.UsageError("--tls-cert and --tls-key go together")
    _check_oidc(oidc_issuer, oidc_audience, oidc_jwks_file)
    _check_profile_name(init_profile)
    base_domain, endpoint_format = workload_endpoints(runtime, base_domain.strip(".").lower(), more)
    remote = dataplane_url(runtime, more)
    controller, watch = controller_options(runtime, more)
    settings = Settings(
        host=host,
        port=port,
        data_dir=data_dir,
        database_url=database_url,
        workers=max(1, workers),
        tls_cert=tls_cert,
        tls_key=tls_key,
        org=org,
        access_log=access_log,
        oidc_issuer=oidc_issuer or None,
        oidc_audience=oidc_audience or None,
        oidc_jwks_file=str(Path(oidc_jwks_file).resolve()) if oidc_jwks_file else None,
        request_timeout=request_timeout,
        rate_limit=rate_limit,
        rate_burst=rate_burst,
        runtime=runtime,
        base_domain=base_domain,
        endpoint_format=endpoint_format,
        dataplane_url=remote,
        public_url=_check_public_url(public_url),
        secrets_key_file=str(secrets_key_file.resolve()) if secrets_key_file else None,
        secrets_key=os.environ.get("PLINTH_SECRETS_KEY") or None,
        shutdown_grace=shutdown_grace,
        metrics_token_file=str(metrics_token_file.resolve()) if metrics_token_file else None,
        metrics_public=metrics_public,
        **watch,
        console=console,
    )
    _check_metrics(settings)
    with _listening(settings) as (sock, settings), _metrics_directory():
        note = _open_secrets_keys(settings)
        key, org, waiting = _bootstrap_or_wait(settings)
        endpoint = _announce(settings, key, org, waiting, note)
        if init_profile:
            _init_profile(init_profile, endpoint, settings, org)
        _run(settings, sock, controller)


def _check_public_url(url: str | None) -> str | None:
    """``--public-url``: an absolute http(s) URL with a host, no query or fragment (or none)."""
    if not url:
        return None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError as exc:
        raise click.BadParameter(f"not a URL: {exc}", param_hint="--public-url") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise click.BadParameter(
            "must be an http:// or https:// URL with a host and no query or fragment", param_hint="--public-url"
        )
    return url.rstrip("/")


@contextlib.contextmanager
def _listening(settings: Settings) -> Iterator[tuple[socket.socket, Settings]]:
    """The listening socket, bound before anything else happens (``server/runner.py``), with
    the settings naming the port it got (``--port 0`` asks for any free one)."""
    from plinth.cli.errors import CannotListen
    from plinth.server import runner

    try:
        sock = runner.listen(settings.host, settings.port)
    except runner.CannotListen as exc:
        raise CannotListen(str(exc)) from exc
    try:
        yield sock, replace(settings, port=int(sock.getsockname()[1]))
    finally:
        sock.close()


@contextlib.contextmanager
def _metrics_directory() -> Iterator[None]:
    """An empty ``PROMETHEUS_MULTIPROC_DIR`` for this server's processes, removed when it stops
    (``plinth.metrics``). Set before anything here imports ``prometheus_client``, which reads
    it once; inherited by the workers. One of the server's own, whatever the environment says:
    files left by another server would add its counts to this one's."""
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="plinth-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = path
    try:
        yield
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _run(settings: Settings, sock: socket.socket, controller: ControllerOptions | None = None) -> None:
    """uvicorn, serving ``sock`` with ``settings.workers`` processes until it is stopped; and the
    runtime controller beside it (``serve_controller.py``), stopped after it."""
    os.environ.update(settings.to_env())
    import uvicorn

    from plinth.server import protocol, runner

    config = uvicorn.Config(
        "plinth.server.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        ssl_certfile=settings.tls_cert,
        ssl_keyfile=settings.tls_key,
        log_level="warning",
        access_log=False,
        server_header=False,
        loop="uvloop",
        http=protocol.IMPORT_PATH,
        timeout_graceful_shutdown=settings.shutdown_grace,
    )
    supervisor = None
    if controller is not None:
        from plinth.cli.store.serve_controller import ControllerSupervisor

        supervisor = ControllerSupervisor(settings, controller)
        supervisor.start()
    try:
        with _shared_commits(settings):
            runner.serve(config, sock)
    finally:
        if supervisor is not None:
            supervisor.stop()


@contextlib.contextmanager
def _shared_commits(settings: Settings) -> Iterator[None]:
    """With several workers on SQLite, this process commits for all of them, so the writes of
    every worker share durable commits (``storage/sqlite_committer.py``); the workers find it
    in their environment. Stopped once they have."""
    from plinth.storage import sqlite_path

    path = sqlite_path(settings.database_url, settings.data_dir)
    if settings.workers < 2 or path is None:
        yield
        return
    from plinth.storage.sqlite_committer import Committer
    from plinth.storage.sqlite_remote import ENV

    committer = Committer(path).start()
    os.environ[ENV] = committer.address.to_env()
    try:
        yield
    finally:
        del os.environ[ENV]
        committer.stop()


def _check_metrics(settings: Settings) -> None:
    """Refuse metrics settings that contradict each other, or a token file without a token."""
    if settings.metrics_public and settings.metrics_token_file:
        raise click.UsageError("--metrics-public serves /metrics without a token: drop --metrics-token-file")
    if settings.metrics_token_file:
        try:
            settings.metrics_token()
        except (OSError, ValueError) as exc:
            raise click.UsageError(str(exc)) from exc


def _check_oidc(issuer: str | None, audience: str | None, jwks_file: str | None) -> None:
    """Refuse OIDC settings that could never sign anyone in, before anything starts."""
    if not issuer:
        if audience or jwks_file:
            raise click.UsageError("--oidc-audience and --oidc-jwks-file need --oidc-issuer")
        return
    from plinth.auth.jwks import JwksError, parse_jwks, url_problem

    if not audience:
        raise click.UsageError("--oidc-issuer needs --oidc-audience (the client id ID tokens are for)")
    if not jwks_file and (problem := url_problem(issuer)) is not None:
        raise click.UsageError(f"--oidc-issuer {problem}")
    if jwks_file:
        import orjson

        try:
            keys = parse_jwks(orjson.loads(Path(jwks_file).read_bytes()))
        except (OSError, orjson.JSONDecodeError, JwksError) as exc:
            raise click.UsageError(f"--oidc-jwks-file: {exc}") from exc
        if not keys:
            raise click.UsageError("--oidc-jwks-file holds no RS256, ES256 or EdDSA signature key with a kid")


def _check_profile_name(name: str | None) -> None:
    """A name the profile store would refuse is a usage error before anything starts."""
    from plinth.cli.profiles import valid_profile_name

    if name is not None and not valid_profile_name(name):
        raise click.UsageError(f"--init-profile: invalid profile name {name!r} (no '/', no leading '.')")


def _init_profile(name: str, endpoint: str, settings: Settings, org: str) -> None:
    key_file = settings.data_dir / "bootstrap-admin.key"
    if not key_file.exists():
        return
    try:
        from plinth.cli.profiles import ensure_local_profile  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return
    if ensure_local_profile(endpoint, key_file.read_text().strip(), org, name=name):
        click.echo(f"Created the CLI profile '{name}' for {endpoint}")
