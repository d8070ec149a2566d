import base64
import struct

import pytest

from lab import keyring


def test_key_layout_is_cephx_aes() -> None:
    secret = bytes(range(16))
    key = keyring.make_key(secret=secret, created=1700000000.5)
    raw = base64.b64decode(key)
    assert struct.unpack("<HIIH", raw[:12]) == (1, 1700000000, 500000000, 16)
    assert keyring.decode_key(key) == secret


def test_keys_are_random() -> None:
    assert keyring.make_key() != keyring.make_key()


def test_wrong_secret_length_is_refused() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        keyring.make_key(secret=b"short")


def test_tentacle_keys_are_type_2_with_32_byte_secrets_and_their_format_is_read_back() -> None:
    aes256k = keyring.KeyFormat(2, 32)
    key = keyring.make_key(aes256k, created=1700000000.0)
    raw = base64.b64decode(key)
    assert struct.unpack("<HIIH", raw[:12]) == (2, 1700000000, 0, 32) and len(raw) == 44
    assert keyring.key_format(key) == aes256k
    assert keyring.key_format(keyring.make_key()) == keyring.AES


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not base64!",
        keyring.make_key(keyring.KeyFormat(3, 32)),
        base64.b64encode(b"short").decode(),
        keyring.make_key()[:-8],
    ],
    ids=["empty", "not-base64", "unknown-type-3", "too-short", "cut-short"],  # fixed: the keys are random
)
def test_a_key_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a cephx key"):
        keyring.key_format(text)


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
