"""The bounded retry: a few quick attempts on failures that a moment's wait can fix.

The official CLI retries ten times with backoff up to 20 s (about 150 s before a refused
connection is reported). Plinth gives up within a few seconds instead (issue 4):

- a refused connection is retried for every method (nothing reached the server);
- other transport failures (reset, timeout) only for idempotent methods;
- 429 for every method (the server did not act), honouring ``Retry-After`` up to the budget;
- 502, 503 and 504 only for idempotent methods;
- TLS failures never: they do not heal by waiting.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
RETRY_STATUSES_IDEMPOTENT = frozenset({502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts and how long to wait; ``budget`` caps the total sleep in seconds."""

    attempts: int = 4
    base_delay: float = 0.2
    max_delay: float = 2.0
    budget: float = 4.0

    def should_retry_status(self, method: str, status: int) -> bool:
        if status == 429:
            return True
        return method.upper() in IDEMPOTENT and status in RETRY_STATUSES_IDEMPOTENT

    def should_retry_transport(self, method: str, code: str) -> bool:
        if code == "ECONNREFUSED":
            return True
        if code in ("ECONNRESET", "ETIMEDOUT", "EPIPE", "ECONNABORTED"):
            return method.upper() in IDEMPOTENT
        return False

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (attempt counts from 1)."""
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), self.max_delay)
            except ValueError:
                pass  # an HTTP-date: fall back to backoff rather than parse calendars here
        backoff = self.base_delay * (2 ** (attempt - 1))
        return min(backoff + random.uniform(0, self.base_delay / 2), self.max_delay)


NO_RETRY = RetryPolicy(attempts=1)
