"""``plinth apply -f`` and ``plinth delete -f``: documents in, one line per item out.

Apply writes each document with the official CLI's upsert (``cpln apply``): ``PUT`` of the
document to its kind's collection (``/org/{org}/{kind}``, ``/org/{org}/gvc/{gvc}/{kind}``),
which creates or replaces. The server's ``x-plinth-outcome`` header says ``created``,
``updated`` or ``unchanged``; a server without it (the hosted platform) is read the way the
official CLI reads it, 201 created and any other 2xx updated. ``--dry-run`` sends
``?dryRun=true``: the server runs every check and stores nothing.

Order and concurrency come from ``plan`` and ``batch``. Each item's line is printed as soon as
its answer arrives (after the lines of the items it links to, which it waited for);
``--ordered`` prints them in the plan's order instead. The first failure stops new writes
(``--continue-on-error`` goes on); failures are raised together as one :class:`BatchFailed`
once the run is over, for ``main`` to print, so the exit code is 1 unless every document was
applied. Prune (``prune.py``) runs only after every document applied. A dry run creates
nothing, so a document that needs one that would be created (its GVC, a volume set it
mounts) may fail its check: such a failure is reported as ``not checked``, not as an error.

``--ready`` (``ready.py``) then waits until every workload of the files is ready at its latest
version, as ``cpln apply --ready`` decides it, or fails after ``--ready-timeout`` naming those
that are not.

Delete takes the same files in the reverse order and sends ``DELETE`` to each item; an item
that is already gone (404) counts as deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plinth.cli.batch import SKIPPED, run_plan
from plinth.cli.errors import BatchFailed, CliError
from plinth.cli.manifests import Document, Placement, read_documents
from plinth.cli.plan import Step, plan, reverse_plan
from plinth.cli.prune import prune_candidates
from plinth.cli.rest_run import connector
from plinth.cli.settings import RequestFlags, Settings, context_value, resolve
from plinth.cli.state import RunState
from plinth.client import ApiClient
from plinth.errors import NotFound

OUTCOME_HEADER = "x-plinth-outcome"
DRY_RUN = "?dryRun=true"
#: What a dry run says of an item it could not check because what it needs is not created yet.
UNCHECKED = "not checked"


@dataclass(frozen=True, slots=True)
class FilesCall:
    """One ``plinth apply`` / ``plinth delete`` as parsed."""

    files: tuple[str, ...]
    flags: RequestFlags
    org: str | None = None
    gvc: str | None = None
    dry_run: bool = False
    keep_going: bool = False
    workers: int = 32
    #: Print the lines in the plan's order instead of as the answers come.
    ordered: bool = False
    prune: bool = False
    selector: tuple[str, str] | None = None
    yes: bool = False
    #: ``--ready``: seconds to wait for the applied workloads to be ready (``None``: no wait).
    ready_timeout: float | None = None


@dataclass
class Session:
    """What a run of apply, delete or prune works with."""

    state: RunState
    settings: Settings
    connect: Callable[[], ApiClient]
    org: str
    call: FilesCall

    def say(self, line: str) -> None:
        self.state.env.stdout.write(line + "\n")
        self.state.env.stdout.flush()


def open_session(state: RunState, call: FilesCall) -> Session:
    state.error_output = call.flags.output
    settings = resolve(state.env, call.flags)
    state.color = settings.color
    org = context_value(state.env, settings, call.org, "org")
    if not org:
        raise CliError("No org: give --org, set $PLINTH_ORG, or set one in the profile (plinth profile update --org)")
    return Session(state, settings, connector(state, settings), org, call)


def load(session: Session) -> list[Document]:
    call = session.call
    gvc = context_value(session.state.env, session.settings, call.gvc, "gvc")
    return read_documents(call.files, session.state.env.stdin, Placement(session.org, gvc, call.gvc))


def run_apply(state: RunState, call: FilesCall) -> None:
    session = open_session(state, call)
    documents = load(session)
    run_steps(session, plan(documents), apply_one(call.dry_run), "applied")
    if call.prune and call.selector is not None:
        run_prune(session, documents, call.selector)
    if call.ready_timeout is not None:
        wait_for_workloads(session, documents, call.ready_timeout)


def wait_for_workloads(session: Session, documents: list[Document], timeout_s: float) -> None:
    """``--ready``: wait until every workload of ``documents`` is ready (``ready.py``)."""
    from plinth.cli.ready import Target, wait_ready

    env = session.state.env
    targets = [Target(d.href, d.label) for d in documents if d.kind == "workload"]
    wait_ready(session.connect, targets, timeout_s, now=env.now, sleep=env.sleep, say=session.say)


def run_delete(state: RunState, call: FilesCall) -> None:
    session = open_session(state, call)
    run_steps(session, reverse_plan(load(session)), delete_one(call.dry_run), "deleted")


def apply_one(dry_run: bool) -> Callable[[ApiClient, Document], str]:
    def action(client: ApiClient, document: Document) -> str:
        answer = client.request("PUT", document.collection + (DRY_RUN if dry_run else ""), document.body)
        outcome = answer.header(OUTCOME_HEADER)
        return outcome or ("created" if answer.status == 201 else "updated")

    return action


def delete_one(dry_run: bool) -> Callable[[ApiClient, Document], str]:
    def action(client: ApiClient, document: Document) -> str:
        try:
            client.request("DELETE", document.href + (DRY_RUN if dry_run else ""))
        except NotFound:
            return "already gone"
        return "deleted"

    return action


def run_steps(session: Session, steps: list[Step], action: Callable[[ApiClient, Document], Any], verb: str) -> None:
    """Run ``steps``, print a line per item (``gvc/prod/workload/web created``), raise the failures."""
    call = session.call
    suffix = " (dry run)" if call.dry_run else ""
    failures: list[tuple[str, BaseException]] = []
    skipped = 0
    outcomes: dict[int, Any] = {}
    for n, result in run_plan(steps, action, session.connect, call.workers, call.keep_going, call.ordered):
        step = steps[n]
        document = step.document
        outcomes[n] = result
        # A step comes after every step it needs (run_plan's contract), so their outcomes are known.
        pending = [steps[m].document.label for m in step.needs if outcomes.get(m) in ("created", UNCHECKED)]
        if result is SKIPPED:
            skipped += 1
        elif isinstance(result, BaseException) and call.dry_run and pending:
            # A dry run creates nothing, so what lives in or links to a new item cannot be checked.
            outcomes[n] = UNCHECKED
            session.say(f"{document.label} {UNCHECKED} (dry run: it needs {', '.join(pending)}, not created yet)")
        elif isinstance(result, BaseException):
            if not isinstance(result, Exception):
                raise result
            failures.append((f"{document.where} ({document.label})", result))
            session.say(f"{document.label} failed{suffix}")
        else:
            session.say(f"{document.label} {result}{suffix}")
    if failures:
        done = len(steps) - len(failures) - skipped
        summary = f"{len(failures)} of {len(steps)} failed, {done} {verb}"
        if skipped:
            summary += f", {skipped} not tried (--continue-on-error goes on after a failure)"
        raise BatchFailed(summary, failures)


def run_prune(session: Session, documents: list[Document], selector: tuple[str, str]) -> None:
    """List, confirm and delete the items to prune."""
    call = session.call
    client = session.connect()
    try:
        candidates = prune_candidates(client, documents, session.org, *selector)
    finally:
        client.close()
    if not candidates:
        return
    steps = reverse_plan(candidates)
    if call.dry_run:
        for step in steps:
            session.say(f"{step.document.label} would be pruned (dry run)")
        return
    if not call.yes:
        _confirm(session, [step.document.label for step in steps], "=".join(selector))
    run_steps(session, steps, _pruned(delete_one(False)), "pruned")


def _pruned(delete: Any) -> Any:
    def action(client: ApiClient, document: Document) -> str:
        return "pruned" if delete(client, document) == "deleted" else "already gone"

    return action


def _confirm(session: Session, labels: list[str], selector: str) -> None:
    env = session.state.env
    listing = "\n".join(f"  {label}" for label in labels)
    question = f"These {len(labels)} items carry {selector} but are not in the files:\n{listing}\n"
    if not env.stdin_isatty:
        raise CliError(question + "Not pruned: confirm with --yes (standard input is not a terminal to ask on)")
    env.stderr.write(question + "Delete them? [y/N] ")
    env.stderr.flush()
    answer = env.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise CliError("Not pruned.")
