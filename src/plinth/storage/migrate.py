"""Versioned schema migrations (yoyo), shared by both backends and applied at start."""

from __future__ import annotations

from pathlib import Path

MIGRATIONS = Path(__file__).parent / "migrations"


def migrate(url: str, directory: Path) -> None:
    """Apply pending migrations from ``directory`` to the database at the yoyo ``url``.

    Runs under yoyo's lock (a row in its lock table), so replicas starting together
    apply each migration once. Blocking: call it from a worker thread.
    """
    from yoyo import get_backend, read_migrations

    backend = get_backend(url)
    try:
        migrations = read_migrations(str(directory))
        with backend.lock():
            backend.apply_migrations(backend.to_apply(migrations))
    finally:
        backend.connection.close()
