"""Image pulls that failed are retried with back-off, as a kubelet's ``ImagePullBackOff``.

A pull that fails waits ``base_s`` before the next try, doubling after each failure up to
``cap_s`` (10 s to 300 s, the kubelet's schedule). Until then every pass that wants the image
fails its workloads at once with the last failure, without asking the engine, so a registry
that is down is not asked again on every pass of every workload. A pull that succeeds, or an
image that appears in the engine's store by other means, clears the count.

The message stays the same between attempts (``pulling IMAGE: reason (N failed pulls; next
try with back-off)``): the reporter posts only what changed, so a countdown in it would post
on every pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from plinth.runtime.containers.protocol import ImagePullError

BASE_S, CAP_S = 10.0, 300.0


@dataclass
class _Failures:
    count: int
    message: str
    retry_at: float


class PullBackoff:
    """Per image: how many pulls failed, why, and when the next may be tried."""

    def __init__(self, base_s: float = BASE_S, cap_s: float = CAP_S, clock: Callable[[], float] = time.monotonic):
        self.base_s, self.cap_s, self.clock = base_s, cap_s, clock
        self._failed: dict[str, _Failures] = {}

    def check(self, image: str) -> None:
        """Raise the last failure while ``image`` is backing off; return when it may be pulled."""
        failures = self._failed.get(image)
        if failures is not None and self.clock() < failures.retry_at:
            raise ImagePullError(self._message(failures))

    def failed(self, image: str, reason: str) -> ImagePullError:
        """Count a failed pull; the error to raise (its message names the count)."""
        count = self._failed[image].count + 1 if image in self._failed else 1
        wait = min(self.cap_s, self.base_s * 2 ** (count - 1))
        self._failed[image] = _Failures(count, reason, self.clock() + wait)
        return ImagePullError(self._message(self._failed[image]))

    def succeeded(self, image: str) -> None:
        self._failed.pop(image, None)

    def failures(self, image: str) -> int:
        return self._failed[image].count if image in self._failed else 0

    @staticmethod
    def _message(failures: _Failures) -> str:
        plural = "s" if failures.count > 1 else ""
        return f"{failures.message} ({failures.count} failed pull{plural}; next try with back-off)"
