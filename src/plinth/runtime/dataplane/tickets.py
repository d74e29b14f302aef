"""Port-forward tickets: what ``POST {remote}/portforward-ticket`` hands out, and the socket
``{remote}/portforward`` takes back (docs/runtime.md, "Port forwarding").

A ticket is the record that the API allowed (and audited) forwarding to one port of one
workload's replica for one token. It is a random string bound to exactly that: the org, GVC,
workload, replica (``pod``, or none: any replica), port, location and a digest of the token (never the
token). The official CLI 3.10.1 (``commands/portforward.js``, ``resolveTicketForPort``) asks
for a ticket once per remote port and sends it on **every** connection it forwards to that
port, until the data plane answers that it expired (``code`` 1); it then asks for a new one. So
a ticket is not spent by a connection: it lives :data:`IDLE_S` after its last use and at most
:data:`MAX_AGE_S` after it was issued. Every connection is authorized again with its token
anyway (``portforward.py``); the ticket only spares the audit trail one event per connection.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

#: A ticket unused this long expires (the CLI then asks for a new one, transparently but for the
#: one connection that found it expired).
IDLE_S = 120.0
#: No ticket outlives this: a new one means a new access check and a new audit event.
MAX_AGE_S = 3600.0
#: Tickets kept at most; the oldest go first (each is small; this bounds a flood of requests).
MAX_TICKETS = 10_000


def token_digest(token: str) -> str:
    """What a ticket keeps of its token: enough to compare, nothing to reuse."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Grant:
    """What a ticket allows: forwarding to ``port`` of ``pod`` (any replica when empty) at
    ``location`` (whose ``remote`` issued it), for the token of digest ``token``."""

    org: str
    gvc: str
    workload: str
    pod: str
    port: int
    location: str
    token: str  # its digest (token_digest)


@dataclass(slots=True)
class _Ticket:
    grant: Grant
    issued: float
    used: float


class Tickets:
    """The data plane's tickets, in memory (a restarted controller forgets them: the CLI asks
    again on the ``code`` 1 answer)."""

    def __init__(
        self, idle_s: float = IDLE_S, max_age_s: float = MAX_AGE_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.idle_s, self.max_age_s, self.clock = idle_s, max_age_s, clock
        self._tickets: dict[str, _Ticket] = {}

    def issue(self, grant: Grant) -> str:
        """A new ticket for ``grant``."""
        self._expire()
        while len(self._tickets) >= MAX_TICKETS:
            del self._tickets[next(iter(self._tickets))]
        ticket = secrets.token_urlsafe(32)
        now = self.clock()
        self._tickets[ticket] = _Ticket(grant, now, now)
        return ticket

    def redeem(self, ticket: str, grant: Grant) -> bool:
        """Whether ``ticket`` is live and was issued for exactly ``grant``; a use renews it
        (within :data:`MAX_AGE_S`)."""
        self._expire()
        found = self._tickets.get(ticket)
        if found is None or not secrets.compare_digest(found.grant.token, grant.token) or found.grant != grant:
            return False
        found.used = self.clock()
        return True

    def _expire(self) -> None:
        now = self.clock()
        dead = [
            key for key, t in self._tickets.items() if now - t.used > self.idle_s or now - t.issued > self.max_age_s
        ]
        for key in dead:
            del self._tickets[key]
