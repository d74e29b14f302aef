"""The sealing component on its own: AES-256-GCM with key ids and item-bound associated data, and keys."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from plinth.sealing import (
    CannotUnseal,
    FileKeys,
    KeyConfigError,
    KeyRing,
    Sealer,
    StaticKeys,
    UnknownKeyId,
    generate_key,
    open_keys,
)
from plinth.sealing import keys as keys_module
from plinth.sealing.keys import key_file_text, parse_key, parse_key_file, write_key_file

PLAINTEXT = b'{"data":{"payload":"hunter2"}}'
HREF = "/org/acme/secret/db"


def sealer_of(*keys: keys_module.Key) -> Sealer:
    return Sealer(StaticKeys(KeyRing(tuple(keys))))


def test_a_sealed_value_opens_only_for_its_item_with_a_fresh_nonce_each_time() -> None:
    key = generate_key()
    sealer = sealer_of(key)
    first, second = sealer.seal(PLAINTEXT, HREF), sealer.seal(PLAINTEXT, HREF)
    assert set(first) == {"alg", "kid", "nonce", "ct"} and first["alg"] == "A256GCM" and first["kid"] == key.kid
    assert len(base64.b64decode(first["nonce"])) == 12
    assert first["nonce"] != second["nonce"] and first["ct"] != second["ct"]
    assert b"hunter2" not in base64.b64decode(first["ct"])
    assert sealer.unseal(first, HREF) == sealer.unseal(second, HREF) == PLAINTEXT
    for elsewhere in ("/org/acme/secret/other", "/org/other/secret/db"):
        with pytest.raises(CannotUnseal, match="sealed for another item"):
            sealer.unseal(first, elsewhere)


def test_an_altered_value_does_not_open() -> None:
    sealer = sealer_of(generate_key())
    sealed = sealer.seal(PLAINTEXT, HREF)
    raw = bytearray(base64.b64decode(sealed["ct"]))
    raw[0] ^= 1
    with pytest.raises(CannotUnseal):
        sealer.unseal({**sealed, "ct": base64.b64encode(bytes(raw)).decode()}, HREF)
    for broken in ({**sealed, "nonce": "!!"}, {**sealed, "alg": "none"}, {"ct": sealed["ct"]}):
        with pytest.raises(CannotUnseal):
            sealer.unseal(broken, HREF)


def test_the_newest_key_seals_and_every_key_opens() -> None:
    old, new = generate_key(), generate_key()
    sealed_by_old = sealer_of(old).seal(PLAINTEXT, HREF)
    both = sealer_of(old, new)
    assert both.newest_kid == new.kid and both.seal(PLAINTEXT, HREF)["kid"] == new.kid
    assert both.unseal(sealed_by_old, HREF) == PLAINTEXT
    with pytest.raises(UnknownKeyId, match=old.kid) as missing:
        sealer_of(new).unseal(sealed_by_old, HREF)
    assert missing.value.kid == old.kid


def test_a_key_id_is_derived_from_the_key_and_says_nothing_of_it() -> None:
    key = generate_key()
    text = base64.b64encode(key.material).decode()
    assert parse_key(text, "x").kid == key.kid and len(key.kid) == 16
    assert key.kid not in text and text not in repr(key)
    assert generate_key().kid != key.kid


def test_key_files_hold_keys_oldest_first_and_messages_never_hold_a_key(tmp_path: Path) -> None:
    a, b = generate_key(), generate_key()
    ring = parse_key_file(key_file_text([a, b]) + "\n# a comment\n", "f")
    assert ring.kids == (a.kid, b.kid) and ring.newest == b
    bad = base64.b64encode(b"short").decode()
    with pytest.raises(KeyConfigError, match="line 1") as short:
        parse_key_file(bad, "f")
    assert bad not in str(short.value)
    with pytest.raises(KeyConfigError, match="not base64"):
        parse_key("not base64 at all!", "PLINTH_SECRETS_KEY")
    with pytest.raises(KeyConfigError, match="holds no key"):
        parse_key_file("# nothing\n", "f")
    path = tmp_path / "keys"
    write_key_file(path, [a])
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    with pytest.raises(FileExistsError):
        write_key_file(path, [b], exclusive=True)
    assert FileKeys(path).ring().kids == (a.kid,)


def test_a_key_file_is_read_again_when_a_key_is_added(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = generate_key(), generate_key()
    path = tmp_path / "keys"
    write_key_file(path, [a])
    source = FileKeys(path)
    sealer = Sealer(source)
    by_b = sealer_of(b).seal(PLAINTEXT, HREF)
    write_key_file(path, [a, b])
    assert sealer.unseal(by_b, HREF) == PLAINTEXT, "an unknown key id reads the file again"
    monkeypatch.setattr(keys_module, "RECHECK_S", 0.0)
    assert sealer.newest_kid == b.kid
    path.write_text("garbage\n")
    os.utime(path, ns=(1, 1))
    assert source.ring().kids == (a.kid, b.kid), "a file that stops parsing keeps the keys last read"


def test_where_a_server_gets_its_keys(tmp_path: Path) -> None:
    key = generate_key()
    text = base64.b64encode(key.material).decode()
    with pytest.raises(KeyConfigError, match="either"):
        open_keys(tmp_path / "k", text, tmp_path, False, generate=True)
    with pytest.raises(KeyConfigError, match="PostgreSQL store needs a secrets key"):
        open_keys(None, None, tmp_path, True, generate=True)
    assert open_keys(None, None, tmp_path, True, generate=False) is None
    from_env = open_keys(None, text, tmp_path, True, generate=True)
    assert from_env is not None and from_env.source.ring().kids == (key.kid,)
    with pytest.raises(KeyConfigError, match="does not exist"):
        open_keys(tmp_path / "missing", None, tmp_path, True, generate=True)

    data = tmp_path / "data"
    assert open_keys(None, None, data, False, generate=False) is None
    first = open_keys(None, None, data, False, generate=True)
    assert first is not None and first.note is not None and "secrets.key" in first.note
    made = data / "secrets.key"
    assert oct(made.stat().st_mode & 0o777) == "0o600"
    again = open_keys(None, None, data, False, generate=True)
    assert again is not None and again.note is None
    assert again.source.ring().kids == first.source.ring().kids
