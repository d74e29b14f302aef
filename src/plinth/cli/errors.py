"""The CLI's own failures and its exit codes; ``main`` is the only place that maps one to the other.

Tree::

    CliError                exit 1: the input or a local step failed; ``message`` is printed as is
    ├── InputError          a body file is missing or does not parse
    ├── FormatError         the response cannot be shown in the chosen -o (names, table)
    ├── ProfileError        the chosen profile does not exist, or a profile file is broken
    ├── CannotListen        exit 4: ``plinth serve``: the address is in use (or not ours to bind)
    ├── StoreTooNew         exit 5: ``plinth serve``: a newer Plinth has migrated the store
    ├── BatchFailed         some documents of ``plinth apply``/``delete -f`` failed: each is
    │                       printed with its place in the files and its error, then the summary
    └── NotReady            ``plinth apply --ready``: workloads not ready at their latest
                            version within ``--ready-timeout``, each named with why
    UsageError (click)      exit 2: bad command line; the command's help is printed too

Exit 3 is uvicorn's: a worker process failed to start (its log says why). ``plinth serve``
exits 0 after a graceful stop (``SIGTERM``/``SIGINT``).

Errors from the server (``plinth.errors.APIError``) and from the network
(``plinth.client.TransportError``) also exit 1 and print in the chosen output format.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    #: A worker failed to start (uvicorn's own start-up failure code).
    START_FAILED = 3
    CANNOT_LISTEN = 4
    STORE_TOO_NEW = 5


class CliError(Exception):
    """A failure the user can read: ``message`` goes to stderr followed by an empty line."""

    exit_code: int = ExitCode.FAILED

    def __init__(self, message: str, *, prefix: str = "", blank_line: bool = True) -> None:
        super().__init__(message)
        self.message = message
        #: printed on its own line(s) before ``message`` (e.g. the table crash notice)
        self.prefix = prefix
        #: whether an empty line follows the message, as it does for most official CLI errors
        self.blank_line = blank_line


class InputError(CliError):
    pass


class FormatError(CliError):
    pass


class ProfileError(CliError):
    pass


class EditAborted(CliError):
    """The edit loop stopped; ``message`` says why and where the edited file was kept."""


class CannotListen(CliError):
    """``plinth serve`` could not bind its address; one line, before anything else is done."""

    exit_code = ExitCode.CANNOT_LISTEN

    def __init__(self, message: str) -> None:
        super().__init__(f"plinth: {message}", blank_line=False)


class StoreTooNew(CliError):
    """``plinth serve`` found a store migrated by a newer Plinth, and did not touch it."""

    exit_code = ExitCode.STORE_TOO_NEW

    def __init__(self, message: str) -> None:
        super().__init__(f"plinth: {message}", blank_line=False)


class NotReady(CliError):
    """``plinth apply --ready`` gave up: ``message`` names each workload not ready and why."""


class BatchFailed(CliError):
    """Some items of a run failed: ``failures`` pairs where each one is (``stack.yaml#3
    (gvc/prod/workload/web)``) with its error (an ``APIError``, a ``TransportError``, or
    any other exception, shown as its message); ``message`` is the summary line."""

    def __init__(self, message: str, failures: list[tuple[str, BaseException]]) -> None:
        super().__init__(message)
        self.failures = failures
