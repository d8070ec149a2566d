import base64
import struct

import pytest

from lab import keyring


def test_key_layout_is_cephx_aes() -> None:
    secret = bytes(range(16))
    key = keyring.make_key(secret, created=1700000000.5)
    raw = base64.b64decode(key)
    assert struct.unpack("<HIIH", raw[:12]) == (1, 1700000000, 500000000, 16)
    assert keyring.decode_key(key) == secret


def test_keys_are_random() -> None:
    assert keyring.make_key() != keyring.make_key()


def test_wrong_secret_length_is_refused() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        keyring.make_key(b"short")


def test_render_writes_key_and_quoted_caps() -> None:
    entity = keyring.Entity("mgr.x", "KEY==", keyring.caps_for("mgr.x"))
    text = keyring.render([entity])
    assert text.splitlines() == [
        "[mgr.x]",
        "\tkey = KEY==",
        '\tcaps mon = "allow profile mgr"',
        '\tcaps osd = "allow *"',
        '\tcaps mds = "allow *"',
    ]


def test_every_lab_entity_has_caps_and_others_are_refused() -> None:
    for name in ("mon.", "client.admin", "mgr.y", "osd.12", "client.rgw.pwlab"):
        assert keyring.caps_for(name)
    with pytest.raises(ValueError):
        keyring.caps_for("client.somebody")
