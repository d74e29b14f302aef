"""The reporter's pure parts: replicas grouped as the API shows them, and its messages.
(``test_loop.py`` runs it against a real server and real containers.)"""

from __future__ import annotations

from plinth.runtime.controller.reporter import _crash, _locations, explained
from plinth.runtime.controller.supervisor import ReplicaObservation


def entry(
    replica: str, container: str, template: str, ready: bool = True, restarts: int = 0, message: str = ""
) -> ReplicaObservation:
    return ReplicaObservation(
        name=f"{replica}_{container}_{template}",
        location="aws-us-east-2",
        replica=replica,
        ready=ready,
        restarts=restarts,
        template=template,
        message=message,
        container=container,
    )


def test_a_rollout_shows_old_and_new_replicas_apart() -> None:
    entries = [
        entry("web-0", "main", "old0"),
        entry("web-0", "side", "old1"),
        entry("web-0", "main", "new0", ready=False, message="readiness probe has not passed yet"),
        entry("web-0", "side", "new1"),
    ]
    [location] = _locations(entries, {"new0", "new1"}, {"new0": "img:2", "new1": "side:2"})
    replicas = {r["template"]: r for r in location["replicas"]}
    assert set(replicas) == {"old0+old1", "new0+new1"}
    new = replicas["new0+new1"]
    assert new["ready"] is False and new["message"] == "readiness probe has not passed yet"
    assert [(c["name"], c["image"]) for c in new["containers"]] == [("main", "img:2"), ("side", "side:2")]
    assert replicas["old0+old1"]["ready"] is True


def test_messages_say_why() -> None:
    backoff = "back-off 7 s restarting failed container (container exited with code 3; 2 restarts)"
    [location] = _locations([entry("job-0", "main", "t", ready=False, restarts=2, message=backoff)], {"t"}, {})
    assert location["replicas"][0]["message"] == (
        "back-off restarting failed container (container exited with code 3; 2 restarts)"
    )  # the seconds left change every pass: left out, so an unchanged crash loop writes nothing
    assert _crash([location]) == "crash loop: exit code 3"
    assert (
        explained("pulling example.org/nope:1: manifest unknown")
        == "image missing: example.org/nope:1: manifest unknown"
    )
    assert explained("container exited") == "container exited"
