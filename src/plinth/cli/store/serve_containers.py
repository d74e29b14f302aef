"""The ``plinth serve`` options of ``--runtime containers`` (docs/runtime.md, "The controller process")."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

import click

from plinth.cli.store.serve_controller import ControllerOptions, gateway_base_domain

DEFAULT_GATEWAY_LISTEN = "127.0.0.1:8880"
DEFAULT_DATAPLANE_LISTEN = "127.0.0.1:8881"
_NAMES = (
    "container_engine",
    "gateway_listen",
    "dataplane_listen",
    "dataplane_url",
    "remove_containers_on_exit",
    "container_label",
    "no_controller",
    "log_retention_bytes",
)


def container_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options; :func:`controller_options` reads them back."""
    options = (
        click.option(
            "--container-engine",
            envvar="PLINTH_CONTAINER_ENGINE",
            type=click.Choice(["podman", "docker"]),
            default=None,
            help="--runtime containers: the engine (default: podman when found, else docker)",
        ),
        click.option(
            "--gateway-listen",
            envvar="PLINTH_GATEWAY_LISTEN",
            default=DEFAULT_GATEWAY_LISTEN,
            show_default=True,
            help="--runtime containers: where the gateway (Caddy) serves workloads and domains, loopback HOST:PORT",
        ),
        click.option(
            "--dataplane-listen",
            envvar="PLINTH_DATAPLANE_LISTEN",
            default=DEFAULT_DATAPLANE_LISTEN,
            show_default=True,
            help="--runtime containers: where the data plane (replica listing, exec, connect, cp) listens, "
            "loopback HOST:PORT",
        ),
        click.option(
            "--dataplane-url",
            envvar="PLINTH_DATAPLANE_URL",
            default=None,
            help="--runtime containers: the data plane's URL as clients reach it, each deployment's "
            "status.remote being URL/location/LOCATION (default: http://DATAPLANE-LISTEN)",
        ),
        click.option(
            "--remove-containers-on-exit",
            envvar="PLINTH_REMOVE_CONTAINERS_ON_EXIT",
            is_flag=True,
            default=False,
            help="--runtime containers: remove the containers when the server stops (default: leave them "
            "running, adopted by the next start)",
        ),
        click.option(
            "--container-label",
            multiple=True,
            metavar="KEY=VALUE",
            help="--runtime containers: an extra label of every container; the controller touches only "
            "containers carrying all of them (repeatable)",
        ),
        click.option(
            "--log-retention-bytes",
            envvar="PLINTH_LOG_RETENTION_BYTES",
            type=click.IntRange(min=1),
            default=None,
            help="--runtime containers: most bytes of log lines kept per workload, oldest dropped first "
            "(default 16 MiB)",
        ),
        click.option(
            "--no-controller",
            is_flag=True,
            default=False,
            help="--runtime containers: serve status without starting the controller (it runs elsewhere)",
        ),
    )
    for option in reversed(options):
        command = option(command)
    return command


def _labels(values: tuple[str, ...]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not key.strip() or key.startswith("plinth.managed"):
            raise click.BadParameter(
                f"'{text}' is not KEY=VALUE (other than plinth.managed)", param_hint="--container-label"
            )
        labels[key.strip()] = value
    return labels


def workload_endpoints(runtime: str, base_domain: str, more: dict[str, Any]) -> tuple[str, str]:
    """``(base domain, endpoint format)`` of workload endpoints. With ``--runtime containers``
    they are the gateway's, so ``status.endpoint`` is a URL that answers: hosts under
    ``--base-domain``, or ``localhost`` (which resolves here) while it is the platform's
    default, over http on the gateway's port (docs/runtime.md)."""
    from plinth.kinds.base import DEFAULT_ENDPOINT_FORMAT

    if runtime != "containers":
        return base_domain, DEFAULT_ENDPOINT_FORMAT
    port = str(more.get("gateway_listen") or "").rpartition(":")[2]
    return gateway_base_domain(base_domain), "http://{host}" + ("" if port in ("", "80") else f":{port}")


def dataplane_url(runtime: str, more: dict[str, Any]) -> str:
    """The data plane's base URL the server reports in ``status.remote`` (docs/runtime.md, "The
    data plane"): ``--dataplane-url``, else ``http://{--dataplane-listen}``; empty for the other
    runtimes, which have no data plane."""
    if runtime != "containers":
        return ""
    url = str(more.get("dataplane_url") or "").strip().rstrip("/")
    if url:
        if not url.startswith(("http://", "https://")):
            raise click.BadParameter("must be an http:// or https:// URL", param_hint="--dataplane-url")
        return url
    return f"http://{more.get('dataplane_listen') or DEFAULT_DATAPLANE_LISTEN}"


def controller_options(runtime: str, more: dict[str, Any]) -> tuple[ControllerOptions | None, dict[str, Any]]:
    """The controller to start (``None``: none) and the options left for the others."""
    mine = {name: more.pop(name) for name in _NAMES}
    if runtime != "containers" or mine["no_controller"]:
        return None, more
    from plinth.runtime.gateway.caddy import loopback_address

    try:
        listen = loopback_address(mine["gateway_listen"])
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--gateway-listen") from exc
    try:
        dataplane = loopback_address(mine["dataplane_listen"])
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--dataplane-listen") from exc
    engine = mine["container_engine"]
    wanted = (engine,) if engine else ("podman", "docker")
    if not any(shutil.which(name) for name in wanted):
        raise click.ClickException(
            f"--runtime containers: no container engine found ({' or '.join(wanted)}): "
            "apt-get install podman, or choose --runtime simulated"
        )
    if shutil.which("caddy") is None:
        raise click.ClickException("--runtime containers: the gateway needs Caddy: apt-get install caddy")
    return (
        ControllerOptions(
            engine=engine,
            gateway_listen=listen,
            dataplane_listen=dataplane,
            labels=_labels(mine["container_label"]),
            remove_on_exit=mine["remove_containers_on_exit"],
            log_retention_bytes=mine["log_retention_bytes"],
        ),
        more,
    )
