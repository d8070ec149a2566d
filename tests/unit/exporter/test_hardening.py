"""The exporter and the shared server hardened: password guesses do not crowd out scrapes, hash costs are
bounded, fake processes and their names cannot flood or forge the log, IPv6 client names compare as
addresses, a name that is not UTF-8, a PID reused between two reads or a uid the host gave another user
fool nothing, a cached page is not copied for every client. Why: docs/decisions/adversarial-reviews.md."""

from __future__ import annotations

import base64
import logging
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from perfwatch.common.metrics_model import Sample
from perfwatch.common.server import Response, encode
from perfwatch.common.server import passwords as pw
from perfwatch.common.server.basic_auth import (
    AUTH_FAILED,
    AUTH_THROTTLED,
    FAILURES,
    THROTTLE_SECONDS,
    BasicAuth,
    status_of,
)
from perfwatch.common.server.handshake import not_allowed
from perfwatch_host_exporter import trust
from perfwatch_host_exporter.collection_loop import CollectionLoop
from perfwatch_host_exporter.discovery import Scanner
from perfwatch_host_exporter.errors import ErrorCounter
from perfwatch_host_exporter.fsroot import StatResult
from tests.fixtures.exporter.fakehost import FakeHost

ROOT_ONLY = trust.Trusted(frozenset({0}), ((0, "root"),))


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_guesses_from_one_address_are_throttled_and_never_reach_the_hash() -> None:
    auth = BasicAuth({"prometheus": pw.hash_pbkdf2("the right one", iterations=1000)})
    now = 100.0
    for _ in range(FAILURES):
        assert auth.refusal(basic("prometheus", "guess"), "203.0.113.9", now) == AUTH_FAILED
    assert auth.refusal(basic("prometheus", "the right one"), "203.0.113.9", now) == AUTH_THROTTLED, "even right"
    assert auth.refusal(basic("prometheus", "the right one"), "192.0.2.1", now) is None, "another address is not"
    assert auth.refusal(basic("prometheus", "the right one"), "203.0.113.9", now) is None, "remembered: no check"
    assert auth.refusal(basic("prometheus", "guess"), "203.0.113.9", now + THROTTLE_SECONDS) == AUTH_FAILED
    assert status_of(AUTH_THROTTLED) == (429, {"Retry-After": "10"})


def test_one_password_check_at_a_time() -> None:
    auth = BasicAuth({"prometheus": pw.hash_pbkdf2("right", iterations=1000)})
    assert auth.refusal(basic("prometheus", "right"), "a") is None
    with auth._checking:  # a check in progress
        assert auth.refusal(basic("prometheus", "other"), "b") == AUTH_THROTTLED
        assert auth.refusal(basic("prometheus", "right"), "b") is None, "a remembered password needs no check"


def test_hash_costs_are_bounded() -> None:
    expensive = pw._KNOWN_HASH.decode().replace("$2b$04$", "$2b$14$")
    with pytest.raises(pw.PasswordError, match="bcrypt cost 14 is above 12"):
        pw.check_hash(expensive)
    with pytest.raises(pw.PasswordError, match="above 1000000"):
        pw.check_hash(pw.hash_pbkdf2("x", iterations=1000).replace("$1000$", "$5000000$"))


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def logger() -> tuple[logging.Logger, Lines]:
    log = logging.getLogger(f"hardening-{id(object())}")
    handler = Lines()
    log.addHandler(handler)
    log.setLevel(logging.WARNING)
    log.propagate = False
    return log, handler


def test_a_thousand_fake_daemons_of_one_user_log_one_warning_and_count_each(tmp_path: Path) -> None:
    host = FakeHost(tmp_path / "host")
    for pid in range(1000, 2500):
        host.process(pid, "ceph-osd", ["ceph-osd", "-i", "7"], uid=1000)
    host.process(3000, "ceph-osd", ["ceph-osd", "-i", "8"], uid=1001)
    log, lines = logger()
    refusals = ErrorCounter(["untrusted_process"], log)
    scanner = Scanner(host.root(), lambda *a: None, refusals)
    for _ in range(3):
        assert scanner.scan(ROOT_ONLY, None, False) == []
    assert refusals.counts["untrusted_process"] == 3 * 1501
    assert len(lines.lines) == 2, "one warning per user, not per process or collection"


def test_a_process_name_cannot_write_log_lines(tmp_path: Path) -> None:
    log, lines = logger()
    ErrorCounter(["untrusted_process"], log)("untrusted_process", "pid 5 ('x\nCRIT: fake') runs as uid 1000")
    assert len(lines.lines) == 1 and "\n" not in lines.lines[0] and "\\x0a" in lines.lines[0]


@pytest.mark.parametrize(
    ("allowed", "cert_name", "ok"),
    [
        ("2001:db8::1", "2001:DB8:0:0:0:0:0:1", True),
        ("prometheus", "prometheus", True),
        ("10.0.0.1", "10.0.0.2", False),
    ],
)
def test_client_names_compare_ip_addresses_as_addresses(allowed: str, cert_name: str, ok: bool) -> None:
    cert = {"subjectAltName": (("IP Address" if ":" in cert_name or "." in cert_name else "DNS", cert_name),)}
    assert (not_allowed(cert, (allowed,)) is None) == ok


def test_a_name_that_is_not_utf8_never_stops_the_collection() -> None:
    """An interface named with byte 0xff comes from os.listdir as a lone surrogate: rendered visibly."""
    log, _ = logger()
    labels = (("hostname", "h"), ("device", "eth\udcff"), ("source", "speed"))
    loop = CollectionLoop(lambda: [Sample("network_link_capacity_bytes", "", labels, 1.0)], "h", 15.0, log)
    loop.run_once()
    assert loop.collections == 1 and b'device="eth\\udcff"' in loop.body(False)


def test_a_collection_thread_that_died_is_unhealthy() -> None:
    log, _ = logger()
    loop = CollectionLoop(lambda: [], "h", 15.0, log)
    loop._thread = threading.Thread(target=lambda: None)
    loop._thread.start()
    loop._thread.join()
    assert not loop.health().ok and "thread has stopped" in loop.health().message


def test_a_pid_reused_while_its_command_line_was_read_is_not_taken(tmp_path: Path) -> None:
    host = FakeHost(tmp_path / "host")
    host.process(10, "ceph-osd", ["ceph-osd", "-i", "3"], start=500)
    scanner = Scanner(host.root(), lambda *a: None, lambda *a, **k: None)
    original = scanner._identify

    def reused(pid: int, comm: str, kind: str) -> Any:
        found = original(pid, comm, kind)
        stat_file = host.path("proc/10/stat")  # the daemon exits, another process gets its PID
        stat_file.write_text(stat_file.read_text().replace(" 500 ", " 900 "))
        return found

    scanner._identify = reused  # type: ignore[method-assign]
    assert scanner.scan(ROOT_ONLY, None, False) == []
    scanner._identify = original  # type: ignore[method-assign]
    assert [d.ident.label for d, _ in scanner.scan(ROOT_ONLY, None, False)] == ["osd.3"], "the next scan takes it"


def test_a_cluster_dir_owner_the_host_named_otherwise_is_not_trusted(tmp_path: Path) -> None:
    host = FakeHost(tmp_path / "host")
    cluster_dir = host.path("var/lib/ceph/0e1e0a8c-3b0d-4f4e-9a43-2d9c1a8d7f11")
    cluster_dir.mkdir(parents=True)
    host.stat.set(host.path("var/lib/ceph"), StatResult(stat.S_IFDIR | 0o755, 1, 0, 0))
    host.stat.set(cluster_dir, StatResult(stat.S_IFDIR | 0o755, 1, 0, 167))
    host.write("etc/passwd", host.read("etc/passwd") + "alice:x:167:167::/home/alice:/bin/bash\n")
    got, problems = trust.users(host.root(), [])
    assert 167 not in got.uids and any("the host's user alice" in p for p in problems)
    assert 167 in trust.users(host.root(), [167])[0].uids, "unless the operator says so"


def test_a_cached_page_goes_out_as_it_is() -> None:
    cached = b"x" * 1000
    parts = encode(Response(200, "text/plain", cached, {}, (b"tail",)), False)
    assert parts[1] is cached and parts[2] == b"tail"
    assert b"Content-Length: 1004\r\n" in parts[0]
    assert encode(Response(200, "text/plain", cached, {}, (b"tail",)), True) == parts[:1], "HEAD: the head only"


def test_an_unknown_user_costs_what_the_most_costly_user_does() -> None:
    cheap, dear = pw.hash_pbkdf2("a", iterations=1000), pw.hash_pbkdf2("b", iterations=200000)
    auth = BasicAuth({"cheap": cheap, "dear": dear})
    assert auth._decoy.startswith("$pbkdf2-sha256$200000$")
    assert pw.cost(dear) > pw.cost(cheap) and pw.cost(pw._KNOWN_HASH.decode()) == 2**-6


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.crt\n", "ask less of client certificates"),
        ("  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  client_allowed_sans: [x, y]\n",
         "more client names"),
        ("  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n", "more client names"),
        ("  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  client_allowed_sans: [x]\n"
         "  min_version: TLS12\n", "older TLS version"),
    ],
)  # fmt: skip
def test_a_reload_never_asks_less_of_clients(tmp_path: Path, pki: dict[str, Any], change: str, words: str) -> None:
    from perfwatch_host_exporter import webconfig

    for name, part in (("tls.crt", pki["server"].cert), ("tls.key", pki["server"].key), ("ca.crt", pki["ca"].cert)):
        (tmp_path / name).write_bytes(Path(part).read_bytes())
    head = "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"
    strict = head + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
    strict += "  client_allowed_sans: [x]\n  min_version: TLS13\n"
    current = webconfig.load(str(_write(tmp_path, strict)))
    new = webconfig.load(str(_write(tmp_path, head + change)))
    problem = webconfig._downgrade(current, new)
    assert problem is not None and words in problem


def _write(folder: Path, text: str) -> Path:
    path = folder / "web.yml"
    path.write_text(text)
    return path


def test_a_failed_search_for_its_own_cgroup_is_not_repeated_for_every_daemon(tmp_path: Path) -> None:
    from perfwatch_host_exporter.cgroup_reader import CgroupError, CgroupReader
    from tests.unit.exporter.test_cgroups import kubernetes_host

    host = kubernetes_host(tmp_path)
    reader = CgroupReader(host.root(), own_pid=999)
    reader.refresh_mounts()
    searched = []
    original = reader._find_me
    reader._find_me = lambda top: searched.append(top) or original(top)  # type: ignore[method-assign]
    for _ in range(3):
        with pytest.raises(CgroupError):
            reader.read(100)
    assert searched == ["/host/cgroup"], "once, then the failure is kept for RETRY_SECONDS"
