"""Port-forward tickets (``tickets.py``) and ticket requests (``portforward.parse_request``),
on a clock of the test's own. Forwarding itself runs against real containers with the official
CLI in tests/compat/test_portforward.py."""

from __future__ import annotations

import pytest

from plinth.runtime.dataplane.portforward import BadRequest, parse_request
from plinth.runtime.dataplane.tickets import Grant, Tickets, token_digest


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def grant(token: str = "tok", port: int = 8080, pod: str = "web-0") -> Grant:
    return Grant("org", "gvc", "web", pod, port, "aws-us-east-2", token_digest(token))


def test_a_ticket_serves_every_connection_while_it_is_used() -> None:
    clock = Clock()
    tickets = Tickets(idle_s=60, max_age_s=600, clock=clock)
    ticket = tickets.issue(grant())
    for _ in range(5):
        clock.now += 50  # each use renews it
        assert tickets.redeem(ticket, grant())


def test_a_ticket_expires_unused_and_at_its_maximum_age() -> None:
    clock = Clock()
    tickets = Tickets(idle_s=60, max_age_s=100, clock=clock)
    idle = tickets.issue(grant())
    clock.now += 61
    assert not tickets.redeem(idle, grant())
    aged = tickets.issue(grant())
    for _ in range(3):
        clock.now += 40
        expected = clock.now - 1061 <= 100
        assert tickets.redeem(aged, grant()) is expected
    assert not tickets.redeem(aged, grant())


def test_a_ticket_serves_only_what_it_was_issued_for() -> None:
    tickets = Tickets(clock=Clock())
    ticket = tickets.issue(grant())
    assert not tickets.redeem(ticket, grant(token="another"))
    assert not tickets.redeem(ticket, grant(port=8081))
    assert not tickets.redeem(ticket, grant(pod="web-1"))
    assert not tickets.redeem("made-up", grant())
    assert tickets.redeem(ticket, grant())


def test_tickets_keep_no_token() -> None:
    tickets = Tickets(clock=Clock())
    tickets.issue(grant(token="secret-token-value"))
    assert "secret-token-value" not in repr(vars(tickets))


def test_a_ticket_request_names_every_bad_field() -> None:
    with pytest.raises(BadRequest) as caught:
        parse_request({"org": "o", "gvc": "", "workload": "a/b", "pod": 3, "port": 0})
    assert [path for path, _ in caught.value.errors] == ["gvc", "workload", "pod", "port"]
    with pytest.raises(BadRequest) as caught:
        parse_request([])
    assert caught.value.errors[0][0] == ""
    request = parse_request({"org": "o", "gvc": "g", "workload": "w", "port": "5432"})
    assert (request.pod, request.port) == ("", 5432)
    assert request.link == "/org/o/gvc/g/workload/w"
