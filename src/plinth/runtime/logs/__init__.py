"""Workload logs with ``--runtime containers``: collected from the engine's log files into a
bounded SQLite store under the controller's state directory, queried with Loki's API and
LogQL's stream selectors and line filters (docs/runtime.md, "Logs")."""

from plinth.runtime.logs.logql import LogQuery, QueryError
from plinth.runtime.logs.logql import parse as parse_logql
from plinth.runtime.logs.params import ParamError
from plinth.runtime.logs.service import LogService, add_arguments
from plinth.runtime.logs.store import DEFAULT_RETENTION_BYTES, LogStore

__all__ = [
    "DEFAULT_RETENTION_BYTES",
    "LogQuery",
    "LogService",
    "LogStore",
    "ParamError",
    "QueryError",
    "add_arguments",
    "parse_logql",
]
