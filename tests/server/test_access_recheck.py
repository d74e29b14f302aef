"""Which writes make the serving process look at the access generation again before its next
request (``PlinthApp._written``): those of kinds that declare ``affects_access`` or
``seeds_access`` (an org seeds its built-in groups and policies), deletes and actions; not a
plain create, PUT or PATCH of any other kind (one read of the store saved per such write). The
server names no kind: the declarations decide."""

from __future__ import annotations

import pytest

from plinth.engine.requestinfo import RequestInfo
from plinth.kinds import REGISTRY
from plinth.server.app import PlinthApp
from plinth.server.settings import Settings


class Recorder:
    """Stands where the app's generation watcher is, counting ``expire`` calls."""

    def __init__(self) -> None:
        self.expired = 0

    def expire(self) -> None:
        self.expired += 1


def rechecks(method: str, kind: str, action: str | None = None) -> bool:
    app = PlinthApp(Settings())
    recorder = Recorder()
    app.watcher = recorder  # type: ignore[assignment]
    app._written(method, RequestInfo(kind=kind, org="acme", name="x", action=action))
    return recorder.expired == 1


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_a_plain_write_rechecks_exactly_when_its_kind_declares_it(kind: str) -> None:
    access = REGISTRY[kind].access
    declared = access.affects_access or access.seeds_access
    for method in ("POST", "PUT", "PATCH"):
        assert rechecks(method, kind) is declared, (method, kind)


def test_an_org_seeds_access_and_the_kinds_that_grant_affect_it() -> None:
    assert REGISTRY["org"].access.seeds_access and not REGISTRY["org"].access.affects_access
    assert all(REGISTRY[k].access.affects_access for k in ("policy", "group", "serviceaccount", "user"))
    assert not rechecks("POST", "domain") and not rechecks("PATCH", "workload")


def test_deletes_and_actions_always_recheck() -> None:
    assert rechecks("DELETE", "domain")
    assert rechecks("POST", "workload", action="command")
