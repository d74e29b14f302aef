"""Server settings: from ``plinth serve`` flags, with ``PLINTH_*`` environment equivalents.

Worker processes receive their settings through the environment (uvicorn starts them from an
import string), so :meth:`Settings.to_env` and :meth:`Settings.from_env` are exact inverses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

from plinth.kinds.base import DEFAULT_BASE_DOMAIN, DEFAULT_ENDPOINT_FORMAT

if TYPE_CHECKING:
    from plinth.sealing import OpenedKeys

MAX_BODY_BYTES = 1024 * 1024
REQUEST_TIMEOUT_S = 30.0
RATE_LIMIT = 1000.0
RATE_BURST = 2000
#: On SIGTERM, how long in-flight requests may take to finish: well under the 30 s a supervisor
#: (Kubernetes, systemd) usually waits before it kills, and far above what a request takes.
SHUTDOWN_GRACE_S = 10
#: Watches (docs/watch.md): the bookmark interval, streams per principal per process, the bytes a
#: stream may fall behind, what the change log keeps (count and age), and the fallback poll.
WATCH_BOOKMARK_S = 20.0
WATCH_LIMIT = 100
WATCH_BUFFER_BYTES = 1024 * 1024
WATCH_RETENTION_COUNT = 100_000
WATCH_RETENTION_AGE_S = 3600.0
WATCH_POLL_S = 0.25
WATCH_TRIM_S = 30.0


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    data_dir: Path = Path(".plinth-data")
    database_url: str | None = None
    workers: int = 1
    tls_cert: str | None = None
    tls_key: str | None = None
    org: str = "default"
    max_body_bytes: int = MAX_BODY_BYTES
    access_log: bool = True
    #: OpenID Connect sign-in for users: the issuer, the client id its ID tokens are for, and
    #: optionally a JWKS file to use instead of fetching the issuer's keys.
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    oidc_jwks_file: str | None = None
    #: Seconds a request may take to arrive: its headers, then its body (0: no limit).
    request_timeout: float = REQUEST_TIMEOUT_S
    #: Requests per second per principal (per client IP without credentials); 0 disables.
    rate_limit: float = RATE_LIMIT
    #: How many requests a principal may make at once before the rate applies.
    rate_burst: int = RATE_BURST
    #: What runs workloads (``plinth.runtime``): ``simulated``, ``none`` or ``containers``.
    runtime: str = "simulated"
    #: ``--runtime containers``: the data plane's base URL (``http://{--dataplane-listen}``), of
    #: which each deployment's ``status.remote`` is ``{url}/location/{location}``; empty: none.
    dataplane_url: str = ""
    #: The public base domain of generated host names (workload endpoints, domain DNS targets).
    base_domain: str = DEFAULT_BASE_DOMAIN
    #: How a workload's host name becomes its endpoint URL (``KindContext.endpoint_format``).
    endpoint_format: str = DEFAULT_ENDPOINT_FORMAT
    #: The URL clients reach this server at (``/discovery`` builds every endpoint from it, never
    #: from a request's ``Host`` header). ``None``: the listen address (``public_base``).
    public_url: str | None = None
    #: Where the keys that seal secrets come from (``plinth.sealing.keys``): a key file, or one
    #: key in base64 (``PLINTH_SECRETS_KEY``, never a flag: command lines are visible to others).
    #: Neither: ``secrets.key`` in the data directory (SQLite only; generated on first start).
    secrets_key_file: str | None = None
    secrets_key: str | None = field(default=None, repr=False)
    #: On SIGTERM: seconds in-flight requests may take before they are cut off (``server/runner.py``).
    shutdown_grace: int = SHUTDOWN_GRACE_S
    #: Who may read ``/metrics`` (``server/metrics.py``): the holder of the token in this file,
    #: or anyone when ``metrics_public``; with neither, nobody.
    metrics_token_file: str | None = None
    metrics_public: bool = False
    #: Watches: seconds between bookmarks, open streams per principal (per process; 429 past
    #: it), bytes a stream may fall behind before it ends, how many changes and how many seconds
    #: of them the change log keeps (410 for older), and seconds between looks at the log when
    #: no notification came (PostgreSQL).
    watch_bookmark_s: float = WATCH_BOOKMARK_S
    watch_limit: int = WATCH_LIMIT
    watch_buffer_bytes: int = WATCH_BUFFER_BYTES
    watch_retention_count: int = WATCH_RETENTION_COUNT
    watch_retention_age_s: float = WATCH_RETENTION_AGE_S
    watch_poll_s: float = WATCH_POLL_S
    #: Seconds between trims of the change log to its retention.
    watch_trim_s: float = WATCH_TRIM_S
    #: Serve the web console at ``/console`` (``server/console.py``, docs/console.md).
    console: bool = True

    def secrets_keys(self) -> OpenedKeys:
        """The keys that seal secrets (a SQLite store's first key is generated here); raises
        ``plinth.sealing.KeyConfigError`` when there are none to be had (PostgreSQL without keys)."""
        from plinth.sealing import open_keys

        postgres = self.store_name == "postgresql"
        opened = open_keys(self.secrets_key_file, self.secrets_key, self.data_dir, postgres, generate=True)
        assert opened is not None
        return opened

    def public_base(self) -> str:
        """``public_url`` without a trailing slash, or else ``http(s)://host:port`` of the listen
        address (a wildcard address names the loopback one: set ``--public-url`` to serve others)."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        if ":" in host:
            host = f"[{host}]"
        return f"{'https' if self.tls_cert else 'http'}://{host}:{self.port}"

    def metrics_token(self) -> str | None:
        """The token in ``metrics_token_file`` (its first line), or ``None`` without one; raises
        ``OSError`` or ``ValueError`` (an empty file) when there is none to be had."""
        if self.metrics_token_file is None:
            return None
        token = Path(self.metrics_token_file).read_text().strip()
        if not token:
            raise ValueError(f"--metrics-token-file {self.metrics_token_file} is empty")
        return token

    @property
    def store_name(self) -> str:
        url = self.database_url or ""
        return "postgresql" if url.startswith(("postgresql://", "postgres://")) else "sqlite"

    def to_env(self) -> dict[str, str]:
        env: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                env[f"PLINTH_{f.name.upper()}"] = str(int(value) if isinstance(value, bool) else value)
        return env

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = env.get(f"PLINTH_{f.name.upper()}")
            if raw is None or raw == "":
                continue
            default = f.default
            if isinstance(default, bool):
                values[f.name] = raw not in ("0", "false", "False")
            elif isinstance(default, float):
                values[f.name] = float(raw)
            elif isinstance(default, int):
                values[f.name] = int(raw)
            elif isinstance(default, Path):
                values[f.name] = Path(raw)
            else:
                values[f.name] = raw
        return cls(**values)  # type: ignore[arg-type]
