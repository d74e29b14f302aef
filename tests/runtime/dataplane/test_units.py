"""The data plane's pure parts: a ``cp`` upload's byte counts (``tarcount.py``) and a session's
first message (``request.parse_request``). The sessions themselves run against real containers
with the official CLI in tests/compat/test_dataplane.py."""

from __future__ import annotations

import asyncio
import io
import json
import os
import tarfile

import pytest

from plinth.runtime.containers import CliEngine, EngineError, ReplicaSpec
from plinth.runtime.dataplane.request import BadRequest, parse_request
from plinth.runtime.dataplane.tarcount import TarProgress, entry_size


def _tar(files: dict[str, bytes], fmt: int = tarfile.USTAR_FORMAT) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    raw = out.getvalue()
    # Python pads the archive to a 10 KiB record; the official CLI's tar (tar-stream) ends
    # with exactly two zero blocks.
    end = len(raw.rstrip(b"\0"))
    end = -(-end // 512) * 512
    return raw[:end] + bytes(1024)


def _cli_total(files: dict[str, bytes]) -> int:
    """The official CLI's expected total (tar-file-transfer.js: calculateTotalSize + 1024)."""
    return sum(512 + -(-len(d) // 512) * 512 for d in files.values()) + 1024


@pytest.mark.parametrize("piece", [1, 511, 512, 4096, 65536])
def test_counts_add_up_to_what_the_cli_expects_in_any_pieces(piece: int) -> None:
    files = {"a.bin": os.urandom(70_001), "empty": b"", "b/c.txt": b"x" * 512}
    raw = _tar(files)
    progress = TarProgress()
    assert sum(progress.feed(raw[i : i + piece]) for i in range(0, len(raw), piece)) == _cli_total(files)


def test_extended_headers_of_long_names_are_not_counted() -> None:
    files = {"d/" + "n" * 150: b"data"}
    raw = _tar(files, tarfile.PAX_FORMAT)
    assert len(raw) > _cli_total(files)  # the pax header entry is there
    assert TarProgress().feed(raw) == _cli_total(files)


def test_base_256_sizes_are_read() -> None:
    header = bytearray(512)
    header[124:136] = bytes([0x80]) + (9 * 2**30).to_bytes(11, "big")
    assert entry_size(bytes(header)) == 9 * 2**30


def test_a_cli_request_becomes_argv_without_a_shell() -> None:
    text = '{"token":"Bearer k","org":"o","gvc":"g","pod":"web-0","container":"main","command":["ls","-l"]}'
    request = parse_request(text)
    assert (request.token, request.argv, request.shell, request.stdin, request.tty) == (
        "k",
        ("ls", "-l"),
        False,
        False,
        False,
    )
    shell_line = "sh -c 'bash -i || sh -i'"
    doc = {
        "token": "k",
        "org": "o",
        "gvc": "g",
        "pod": "p",
        "shell": shell_line,
        "tty": True,
        "width": 100,
        "height": 30,
    }
    shell = parse_request(json.dumps(doc))
    assert shell.argv == ("sh", "-c", "bash -i || sh -i") and shell.shell and shell.stdin and shell.tty
    assert (shell.width, shell.height, shell.container) == (100, 30, None)
    assert parse_request('{"token":"k","org":"o","gvc":"g","pod":"p","command":"ls -l /"}').argv == ("ls", "-l", "/")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json", "JSON"),
        ("[]", "object"),
        ('{"org":"o","gvc":"g","pod":"p","command":["ls"]}', "token"),
        ('{"token":"k","org":"o","gvc":"g/x","pod":"p","command":["ls"]}', "gvc"),
        ('{"token":"k","org":"o","gvc":"g","pod":"p"}', "what to run"),
        ('{"token":"k","org":"o","gvc":"g","pod":"p","command":[1]}', "command"),
    ],
)
def test_a_bad_request_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(BadRequest, match=says):
        parse_request(text)


@pytest.mark.parametrize("network", ["host", "container:abc", "ns:/proc/1/ns/net"])
def test_the_driver_never_runs_a_replica_in_the_hosts_namespaces(network: str) -> None:
    engine = CliEngine("podman", "/nonexistent/podman")  # refused before any engine command
    with pytest.raises(EngineError, match="refused"):
        asyncio.run(engine.run(ReplicaSpec(name="x", image="i", network=network)))
