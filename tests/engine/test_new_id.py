"""``render.new_id``: random version-4 UUIDs, drawn from the OS in blocks (docs/write-path.md),
never the same in two threads or in a forked child."""

from __future__ import annotations

import os
import threading
import uuid

from plinth.engine.render import new_id


def test_ids_are_version_4_uuids_in_their_usual_form() -> None:
    for _ in range(600):  # past one block of random bytes
        value = new_id()
        parsed = uuid.UUID(value)
        assert str(parsed) == value and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_ids_are_unique_across_threads() -> None:
    found: list[list[str]] = [[] for _ in range(4)]

    def draw(into: list[str]) -> None:
        into.extend(new_id() for _ in range(2000))

    threads = [threading.Thread(target=draw, args=(into,)) for into in found]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [value for into in found for value in into]
    assert len(set(every)) == len(every) == 8000


def test_a_forked_child_does_not_hand_out_its_parents_ids() -> None:
    new_id()  # the parent holds a block it has only begun
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        os.close(read)
        os.write(write, "\n".join(new_id() for _ in range(50)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read().split("\n")
    os.waitpid(pid, 0)
    parent = [new_id() for _ in range(50)]
    assert len(child) == 50 and not set(child) & set(parent)
