"""The watch bench's pure parts: reading arrivals out of raw chunks, and the delay figures."""

from __future__ import annotations

import asyncio

from bench import watch


def test_arrivals_are_read_across_chunk_boundaries_once_each() -> None:
    async def scenario() -> dict[int, list[float]]:
        arrivals: dict[int, list[float]] = {}
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        reader = watch._Watch(arrivals, ready, [0])
        line = b'{"type":"MODIFIED","resourceVersion":"7","object":{"description":"bench-12","n":1}}\n'
        two = line + line.replace(b"bench-12", b"bench-13")
        inside = line.find(b"bench-12") + 3  # a cut through the marker itself
        for cut in (10, inside, len(line) + 30, len(line) + inside):
            reader.data_received(two[:cut])
            reader.data_received(two[cut:])
        return arrivals

    arrivals = asyncio.run(scenario())
    assert {n: count for n, (count, _) in arrivals.items()} == {12: 4, 13: 4}


def test_delays_are_from_the_answer_to_the_last_watcher_and_misses_are_counted() -> None:
    n = watch.WATCHERS
    answered = {0: 10.0, 1: 20.0, 2: 30.0}
    arrivals = {0: (n, 10.010), 1: (n, 20.030), 2: (n - 1, 30.5)}
    p50, p99, missed = watch._delays(answered, arrivals)
    assert missed == 1
    assert round(p50) == 20 and round(p99) == 30
