"""The module's endpoint with TLS and basic auth from the mgr store, through the real Module.serve() and its
commands (ceph-mgr's mgr_module is test_module_config's stand-in): ssl on without a certificate serves
nothing and says why, a stored certificate turns it to https://, a rotated one is served at the next pass,
a key that does not match stops it, a client CA asks for client certificates, users ask for passwords."""

from __future__ import annotations

import errno
import ssl
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from perfwatch.commands import secret_store
from perfwatch.endpoint import tls_auth
from tests.unit.perfwatch.common.test_server_security import get
from tests.unit.perfwatch.test_module_config import make, module_class, status  # noqa: F401  (module_class is a fixture)
from tests.unit.perfwatch.test_module_endpoint import next_pass, serving_module, wait_for
from tests.unit.perfwatch.test_module_serve_startup import free_port


def pem(pair: Any, part: str) -> str:
    return Path(getattr(pair, part)).read_text()


@pytest.fixture
def module(module_class: Any) -> Iterator[tuple[Any, int]]:  # noqa: F811
    port = free_port()
    mod = make(module_class, server_addr="127.0.0.1", server_port=port, collect_interval=3600, ssl=True)
    with serving_module(mod):
        yield mod, port


def context(pki: dict[str, Any], client: str | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki["ca"].cert))
    if client:
        ctx.load_cert_chain(str(pki[client].cert), str(pki[client].key))
    return ctx


def served_serial(port: int, pki: dict[str, Any]) -> str:
    with (
        ssl.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context(pki).wrap_socket(raw, server_hostname="127.0.0.1") as sock,
    ):
        return str(sock.getpeercert()["serialNumber"])


def serial(pair: Any) -> str:
    import subprocess

    out = subprocess.run(
        ["openssl", "x509", "-noout", "-serial", "-in", str(pair.cert)], capture_output=True, text=True
    )
    return out.stdout.strip().split("=", 1)[1]


def test_ssl_from_the_store_through_the_commands(module: tuple[Any, int], pki: dict[str, Any]) -> None:
    mod, port = module
    url = f"https://127.0.0.1:{port}/metrics"
    # ssl on, nothing stored: nothing served (never plain HTTP), and the check says what to do
    with pytest.raises(OSError):
        get(f"http://127.0.0.1:{port}/metrics")
    check = mod.health[-1]["PERFWATCH_ENDPOINT"]
    assert "ssl is on but no certificate or key is stored" in check["summary"]
    assert "set-ssl-certificate" in check["summary"] and "serves nowhere" in check["detail"][0]

    assert mod.cmd_set_ssl_certificate(inbuf=pem(pki["server"], "cert"))[0] == 0
    assert mod.cmd_set_ssl_certificate_key(inbuf=pem(pki["server"], "key"))[0] == 0
    wait_for(lambda: mod.uris[-1:] == [f"https://127.0.0.1:{port}/"])
    assert get(url, context(pki))[0] == 200
    assert status(mod)["endpoint"]["security"] == "TLS, no auth"
    assert "PERFWATCH_ENDPOINT" not in mod.health[-1]
    assert served_serial(port, pki) == serial(pki["server"])

    # a rotation: the new certificate is served at the next pass, as its key arrives
    assert mod.cmd_set_ssl_certificate(inbuf=pem(pki["rotated"], "cert"))[0] == 0  # key still the old one
    next_pass(mod)
    assert "key values mismatch" in mod.health[-1]["PERFWATCH_ENDPOINT"]["summary"]
    with pytest.raises(OSError):
        get(url, context(pki))
    assert mod.cmd_set_ssl_certificate_key(inbuf=pem(pki["rotated"], "key"))[0] == 0
    next_pass(mod)
    assert served_serial(port, pki) == serial(pki["rotated"])

    # a client CA: clients must show a certificate it signed
    assert mod.cmd_set_ssl_client_ca(inbuf=pem(pki["ca"], "cert"))[0] == 0
    next_pass(mod)
    with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
        get(url, context(pki))
    assert get(url, context(pki, "prometheus"))[0] == 200
    assert mod.cmd_clear_ssl_client_ca()[0] == 0

    # basic auth on top
    assert mod.cmd_set_basic_auth("prometheus", inbuf="long enough secret\n")[0] == 0
    next_pass(mod)
    assert get(url, context(pki))[0] == 401
    assert get(url, context(pki), "prometheus", "long enough secret")[0] == 200
    _, body = get(url, context(pki), "prometheus", "long enough secret")
    assert b'ceph_perfwatch_http_refused_total{reason="auth_missing"} 1' in body
    assert status(mod)["endpoint"]["security"] == "TLS, basic auth (1 user)"
    assert "long enough secret" not in repr(mod.kv)


def test_per_mgr_certificates_win(module: tuple[Any, int], pki: dict[str, Any]) -> None:
    mod, port = module
    for pair, mgr_id in ((pki["server"], None), (pki["rotated"], "x")):
        assert mod.cmd_set_ssl_certificate(mgr_id=mgr_id, inbuf=pem(pair, "cert"))[0] == 0
        assert mod.cmd_set_ssl_certificate_key(mgr_id=mgr_id, inbuf=pem(pair, "key"))[0] == 0
    assert set(mod.kv) >= {"crt", "key", "x/crt", "x/key"}
    wait_for(lambda: mod.uris[-1:] == [f"https://127.0.0.1:{port}/"])
    assert served_serial(port, pki) == serial(pki["rotated"]), "mgr.x's own"


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda mod: mod.cmd_set_ssl_certificate(inbuf=None), "-i FILE"),
        (lambda mod: mod.cmd_set_ssl_certificate(inbuf="hello"), "not a PEM certificate"),
        (lambda mod: mod.cmd_set_ssl_certificate(inbuf="-----BEGIN CERTIFICATE-----\nxx\n-----END CERTIFICATE-----"),
         "not a readable PEM certificate"),
        (lambda mod: mod.cmd_set_ssl_certificate(mgr_id="a/../b", inbuf="x"), "not a mgr id"),
        (lambda mod: mod.cmd_set_ssl_certificate(mgr_id="mgr.b-host", inbuf="x"),
         "without 'mgr.' (as `ceph mgr stat` shows it): b-host"),
        (lambda mod: mod.cmd_set_ssl_certificate_key(mgr_id="mgr.b", inbuf="x"), "without 'mgr.'"),
        (lambda mod: mod.cmd_set_ssl_certificate_key(inbuf="-----BEGIN CERTIFICATE-----"), "not a PEM private key"),
        (lambda mod: mod.cmd_set_basic_auth("bad:name", inbuf="long enough"), "user name"),
        (lambda mod: mod.cmd_set_basic_auth("p", inbuf="short"), "shorter than 8"),
        (lambda mod: mod.cmd_clear_basic_auth("nobody"), "no basic auth user"),
        (lambda mod: mod.cmd_set_s3_credentials(inbuf="one line"), "two lines"),
        (lambda mod: mod.cmd_set_s3_credentials(inbuf='{"access_key": "a"}'), "secret_key"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_and_nothing_stored(module_class: Any, call: Any, words: str) -> None:  # noqa: F811
    mod = make(module_class)
    retval, _out, err = call(mod)
    assert retval in (-errno.EINVAL, -errno.ENOENT) and words in err, err
    assert mod.kv == {}


def test_s3_credentials_from_a_file_win_over_the_options_and_never_show(module_class: Any) -> None:  # noqa: F811
    secret = "very-secret-key-0123456789"
    mod = make(module_class, rgw_s3_access_key="OPTKEY", rgw_s3_secret_key="option-secret")
    mod.config_notify()
    assert mod.config_in_force.rgw_s3_access_key == "OPTKEY"
    retval, out, err = mod.cmd_set_s3_credentials(inbuf=f"FILEKEY\n{secret}\n")
    assert retval == 0 and secret not in out + err
    assert (mod.config_in_force.rgw_s3_access_key, mod.config_in_force.rgw_s3_secret_key) == ("FILEKEY", secret)
    shown = repr(status(mod)) + repr(mod.health) + repr(mod.config_in_force)
    assert secret not in shown and "option-secret" not in shown
    assert mod.cmd_clear_s3_credentials()[0] == 0
    assert mod.config_in_force.rgw_s3_access_key == "OPTKEY"


def test_stored_users_that_do_not_parse_stop_the_endpoint() -> None:
    given = tls_auth.Inputs(False, None, None, None, '{"u": "plaintext"}')
    wanted = tls_auth.build(given)
    assert wanted.error is not None and "not a password hash" in wanted.error
    assert tls_auth.build(given._replace(users="[1]")).error is not None
    assert tls_auth.build(given._replace(users=None)).error is None


def test_s3_credential_formats() -> None:
    parse = secret_store.parse_s3_credentials
    assert parse("AK\nSK\n") == ("AK", "SK")
    assert parse('{"access_key": "AK", "secret_key": "SK"}') == ("AK", "SK")
    assert parse('{"user_id": "u", "keys": [{"user": "u", "access_key": "AK", "secret_key": "SK"}]}') == ("AK", "SK")
    for bad in ("AK", "AK\nSK\nX", "{not json", '{"keys": []}', "A K\nSK", '{"access_key": 1, "secret_key": "x"}'):
        with pytest.raises(ValueError):
            parse(bad)


def test_a_store_value_that_would_raise_never_stops_the_endpoint_and_never_opens_it(
    monkeypatch: pytest.MonkeyPatch, pki: dict[str, Any]
) -> None:
    """build() fails closed on anything: JSON nested past Python's recursion limit, a full temp dir."""
    deep = tls_auth.Inputs(False, None, None, None, "[" * 100000)
    wanted = tls_auth.build(deep)
    assert wanted.error is not None and "nested too deep" in wanted.error
    assert secret_store.clear_basic_auth({"basic_auth_users": "[" * 100000}.get, lambda k, v: None, "x")[0] < 0

    def full(*args: Any, **kwargs: Any) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tls_auth.tempfile, "mkdtemp", full)
    given = tls_auth.Inputs(True, pem(pki["server"], "cert"), pem(pki["server"], "key"), None, None)
    wanted = tls_auth.build(given)
    assert wanted.error is not None and "No space left" in wanted.error and wanted.security.tls() is None


def test_an_encrypted_key_is_refused_at_once_never_prompted_for(tmp_path: Path, pki: dict[str, Any]) -> None:
    import subprocess

    encrypted = tmp_path / "encrypted.key"
    key = str(pki["server"].key)
    argv = ["openssl", "pkey", "-in", key, "-aes256", "-passout", "pass:secret", "-out", str(encrypted)]
    subprocess.run(argv, check=True, capture_output=True)
    text = encrypted.read_text()
    assert "ENCRYPTED" in text
    assert "encrypted private key" in (tls_auth.check_pem(text, "private key") or "")
    given = tls_auth.Inputs(True, pem(pki["server"], "cert"), text, None, None)
    wanted = tls_auth.build(given)  # an OpenSSL prompt would wait on the terminal here
    assert wanted.error is not None and "encrypted private key" in wanted.error


def test_names_with_a_trailing_newline_or_control_characters_are_refused() -> None:
    store: dict[str, str] = {}
    put = lambda k, v: store.__setitem__(k, v)  # noqa: E731
    assert secret_store.set_basic_auth(store.get, put, "bob\n", "long enough")[0] == -errno.EINVAL
    assert secret_store.set_pem(put, "crt", "x\n", "-----BEGIN CERTIFICATE-----")[0] == -errno.EINVAL
    assert store == {}
    wanted = tls_auth.build(tls_auth.Inputs(False, None, None, None, '{"a\\nb": "x"}'))
    assert wanted.error is not None and "\n" not in wanted.error
