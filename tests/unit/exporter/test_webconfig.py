"""--web.config.file: exporter-toolkit's format read by the standard library, what it refuses, reloads on
change (a rotated certificate), and the exporter serving HTTPS with basic auth from the command line."""

from __future__ import annotations

import logging
import os
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from perfwatch_host_exporter import webconfig, yamlish
from tests.unit.exporter.test_http import ENV, free_port
from tests.unit.perfwatch.common.test_server_security import get

BCRYPT = "$2y$04$J9FW0Y1Tdjp0YkHUMI1FZu.2lRzxDXZhCD3ZEixi.MR3BVYtft7ju"  # "perfwatch"


def test_the_yaml_a_web_config_uses() -> None:
    text = """---
# node_exporter's example, with comments and quoting
tls_server_config:
  cert_file: server.crt   # relative to the file
  key_file: "/etc/x/server.key"
  client_allowed_sans: [prometheus, "10.0.0.1"]
  cipher_suites:
  - TLS_A
  - 'TLS_B'
basic_auth_users:
  alice: $2y$10$abc./def
  'bob''s': "x#y"
http_server_config:
  http2: false
"""
    assert yamlish.loads(text) == {
        "tls_server_config": {
            "cert_file": "server.crt",
            "key_file": "/etc/x/server.key",
            "client_allowed_sans": ["prometheus", "10.0.0.1"],
            "cipher_suites": ["TLS_A", "TLS_B"],
        },
        "basic_auth_users": {"alice": "$2y$10$abc./def", "bob's": "x#y"},
        "http_server_config": {"http2": False},
    }
    assert yamlish.loads("") is None and yamlish.loads("# nothing\n") is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a: &anchor 1", "'&' starts a YAML feature"),
        ("a: |\n  multi", "'|' starts"),
        ("a: {b: 1}", "'{' starts"),
        ("a: 1\na: 2", "given twice"),
        ("a:\n  b: 1\n    c: 2", "line 3"),
        ('a: "open', "not closed"),
        ("- a: b", "only scalars"),
        ("a: 1\n---\nb: 2", "only one document"),
        ("a:\n\tb: 1", "tab"),
    ],
)
def test_yaml_it_does_not_take_is_refused_with_its_line(text: str, words: str) -> None:
    with pytest.raises(yamlish.YamlError, match=words):
        yamlish.loads(text)


def write(folder: Path, text: str) -> Path:
    path = folder / "web.yml"
    path.write_text(text)
    return path


def test_a_full_config_with_relative_paths(tmp_path: Path, pki: dict[str, Any]) -> None:
    for name in ("server", "ca"):
        (tmp_path / f"{name}.crt").write_bytes(pki[name].cert.read_bytes())
    (tmp_path / "server.key").write_bytes(pki["server"].key.read_bytes())
    path = write(
        tmp_path,
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
        "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  min_version: TLS13\n"
        f"  client_allowed_sans: [prometheus]\nbasic_auth_users:\n  prometheus: {BCRYPT}\n",
    )
    loaded = webconfig.load(str(path))
    assert loaded.config.tls is not None and loaded.config.tls.cert_file == str(tmp_path / "server.crt")
    assert loaded.config.allowed_sans == ("prometheus",)
    assert loaded.tls is not None and loaded.tls.verify_mode == ssl.CERT_REQUIRED
    assert loaded.auth is not None and loaded.auth.refusal(None) == "auth_missing"
    assert set(loaded.config.files) == {str(path), *(str(tmp_path / n) for n in ("server.crt", "server.key", "ca.crt"))}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("tls_server_config:\n  cert_file: a.crt\n", "key_file is required"),
        ("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  certfile: x\n", "unknown key"),
        (
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_X]\n",
            "cipher_suites: not supported",
        ),
        ("tls_server_config:\n  cert_file: a\n  key_file: b\n  curve_preferences: [X25519]\n", "not supported"),
        ("http_server_config:\n  headers:\n    X-Frame-Options: deny\n", "headers: not supported"),
        ("http_server_config:\n  http2: maybe\n", "true or false"),
        ("basic_auth_users:\n  alice: plaintext-password\n", "not a password hash"),
        ("basic_auth_users:\n  alice: $2y$10$tooshort\n", "not a bcrypt hash"),
        ("basic_auth_users: [alice]\n", "a mapping"),
        ("tls_config:\n  x: 1\n", "unknown key"),
        ("tls_server_config: yes\n", "a mapping"),
    ],
)
def test_bad_configs_are_refused_with_what_is_wrong(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(webconfig.WebConfigError, match=words):
        webconfig.load(str(write(tmp_path, text)))


def test_a_fifo_as_the_config_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "web.yml")
    with pytest.raises(webconfig.WebConfigError, match="not a regular file"):
        webconfig.load(str(tmp_path / "web.yml"))


def test_an_empty_config_is_plain_http(tmp_path: Path) -> None:
    loaded = webconfig.load(str(write(tmp_path, "# nothing yet\n")))
    assert loaded.tls is None and loaded.auth is None


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_rotated_certificate_is_served_and_a_broken_change_keeps_the_last(
    tmp_path: Path, pki: dict[str, Any]
) -> None:
    (tmp_path / "tls.crt").write_bytes(pki["server"].cert.read_bytes())
    (tmp_path / "tls.key").write_bytes(pki["server"].key.read_bytes())
    path = write(tmp_path, "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n")
    clock = Clock()
    security = webconfig.WebConfigSecurity(str(path), logging.getLogger("t"), clock)

    def looks(times: int) -> Any:
        for _ in range(times):
            clock.now += 1
            found = security.tls()
        return found

    first = security.tls()
    assert first is not None and security.auth() is None
    (tmp_path / "tls.crt").write_bytes(pki["rotated"].cert.read_bytes())
    (tmp_path / "tls.key").write_bytes(pki["rotated"].key.read_bytes())
    assert security.tls() is first, "looked at most once a second"
    assert looks(1) is first, "a change is taken once two looks see it the same (not half-written)"
    second = looks(1)
    assert second is not first
    (tmp_path / "tls.key").write_bytes(pki["server"].key.read_bytes())  # half-way through a rotation
    assert looks(3) is second, "a change that does not load keeps what did"
    write(
        tmp_path, f"tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  p: {BCRYPT}\n"
    )
    (tmp_path / "tls.key").write_bytes(pki["rotated"].key.read_bytes())
    assert looks(2) is not second and security.auth() is not None


@pytest.mark.parametrize("emptied", ["", "# being rewritten\n", "tls_server_config:\n  cert_file: tls.crt\n"])
def test_a_reload_never_turns_tls_or_auth_off(tmp_path: Path, pki: dict[str, Any], emptied: str) -> None:
    """An emptied, truncated or half-written file would mean plain HTTP without auth: refused while running."""
    (tmp_path / "tls.crt").write_bytes(pki["server"].cert.read_bytes())
    (tmp_path / "tls.key").write_bytes(pki["server"].key.read_bytes())
    text = f"tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  p: {BCRYPT}\n"
    path = write(tmp_path, text)
    clock = Clock()
    security = webconfig.WebConfigSecurity(str(path), logging.getLogger("t"), clock)
    tls, auth = security.tls(), security.auth()
    write(tmp_path, emptied)
    for _ in range(4):
        clock.now += 1
        assert security.tls() is tls and security.auth() is auth
    write(tmp_path, text.split("basic_auth_users")[0])  # TLS kept, auth dropped: refused too
    for _ in range(3):
        clock.now += 1
        assert security.auth() is auth


def test_a_reload_that_fails_in_an_unexpected_way_keeps_serving(tmp_path: Path, pki: dict[str, Any]) -> None:
    (tmp_path / "tls.crt").write_bytes(pki["server"].cert.read_bytes())
    (tmp_path / "tls.key").write_bytes(pki["server"].key.read_bytes())
    path = write(tmp_path, "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n")
    clock = Clock()
    security = webconfig.WebConfigSecurity(str(path), logging.getLogger("t"), clock)
    tls = security.tls()
    write(tmp_path, "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n  client_allowed_sans: [a, ]\n")
    for _ in range(3):
        clock.now += 1
        assert security.tls() is tls


def test_the_exporter_serves_https_with_basic_auth(tmp_path: Path, pki: dict[str, Any]) -> None:
    path = write(
        tmp_path,
        f"tls_server_config:\n  cert_file: {pki['server'].cert}\n  key_file: {pki['server'].key}\n"
        f"basic_auth_users:\n  prometheus: {BCRYPT}\n",
    )
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "perfwatch_host_exporter", "--listen-address", "127.0.0.1", "--port", str(port),
         "--web.config.file", str(path)],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    context = ssl.create_default_context(cafile=str(pki["ca"].cert))
    url = f"https://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        status, body = 0, b""
        while time.monotonic() < deadline and b"collections_total" not in body:
            try:
                status, body = get(url + "/metrics", context, "prometheus", "perfwatch")
            except OSError:
                time.sleep(0.1)
        assert status == 200 and b"ceph_perfwatch_exporter_collections_total" in body
        assert get(url + "/metrics", context, "prometheus", "wrong")[0] == 401
        assert get(url + "/metrics", context)[0] == 401
        assert get(url + "/healthz", context)[0] == 200
        status, body = get(f"http://127.0.0.1:{port}/metrics")
        assert status == 400 and b"speaks HTTPS" in body
        _, body = get(url + "/metrics", context, "prometheus", "perfwatch")
        refused = {
            line.split('reason="')[1].split('"')[0]: float(line.rsplit(" ", 1)[1])
            for line in body.decode().splitlines()
            if line.startswith("ceph_perfwatch_exporter_http_refused_total{")
        }
        assert refused == {
            "auth_failed": 1, "auth_missing": 1, "plain_http_to_tls": 1, "tls_handshake_failed": 0,
            "client_cert_not_allowed": 0, "auth_throttled": 0,
        }  # fmt: skip
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
        assert (
            proc.returncode == 0 and f"serving https://127.0.0.1:{port}/metrics (TLS, basic auth (1 user))" in stderr
        ), stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    ("text", "words"),
    [("basic_auth_users:\n  alice: plain\n", "not a password hash"), (None, "No such file")],
)
def test_a_bad_web_config_stops_the_exporter_with_one_line(tmp_path: Path, text: str | None, words: str) -> None:
    path = write(tmp_path, text) if text is not None else tmp_path / "missing.yml"
    proc = subprocess.run(
        [sys.executable, "-m", "perfwatch_host_exporter", "--web.config.file", str(path)],
        env=ENV, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and words in proc.stderr and "--web.config.file" in proc.stderr, proc.stderr
