"""A lab with TLS, client certificates and basic auth on perfwatch's endpoints (`up --secure`), of each
release (the module's TLS runs on that release's Python and OpenSSL): the lab's real
Prometheus scrapes the active mgr's module and every host exporter over https with its client certificate
and password, and the wrong clients an operator meets are refused, clearly and counted: a wrong password,
no password, no client certificate, plain HTTP to the TLS port."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from typing import Any

import pytest

from lab import security
from lab.cluster import Lab

from .labutil import side_lab, wait_until

pytestmark = [pytest.mark.own_lab, pytest.mark.every_release]  # the module's TLS runs on each release's Python
JOBS = ("perfwatch", "perfwatch-host")


def targets(prometheus: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(prometheus + "api/v1/targets?state=active", timeout=10) as resp:
        return [t for t in json.load(resp)["data"]["activeTargets"] if t["labels"]["job"] in JOBS]


def get(url: str, context: ssl.SSLContext | None, password: str | None) -> tuple[int, bytes]:
    headers = {}
    if password is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{security.USER}:{password}".encode()).decode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10, context=context) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def refused(body: bytes, family: str) -> dict[str, float]:
    found = {}
    for line in body.decode().splitlines():
        if line.startswith(family + "{"):
            reason = line.split('reason="', 1)[1].split('"', 1)[0]
            found[reason] = float(line.rsplit(" ", 1)[1])
    return found


def test_a_secure_lab_is_scraped_over_tls_with_auth_and_wrong_clients_are_refused() -> None:
    with side_lab("pwsec", "--secure") as (directory, _):
        handle = Lab.open(directory)
        tls = handle.catalogue.tls
        assert tls is not None
        prometheus = handle.monitoring_urls()["prometheus"]

        def all_up() -> list[dict[str, Any]] | None:  # both mgrs (the standby answers too) and the exporters
            found = targets(prometheus)
            return (
                found
                if {t["labels"]["job"] for t in found} == set(JOBS) and all(t["health"] == "up" for t in found)
                else None
            )

        found = wait_until(all_up, 60, "Prometheus scraping perfwatch over https")
        for target in found:
            print(f"\n{target['labels']['job']}: {target['scrapeUrl']} {target['health']} {target['lastError']!r}")
            assert target["scrapeUrl"].startswith("https://")

        good = ssl.create_default_context(cafile=str(tls.ca.cert))
        good.load_cert_chain(str(tls.client.cert), str(tls.client.key))
        no_client_cert = ssl.create_default_context(cafile=str(tls.ca.cert))
        password = security.password(tls)
        exporter = handle.exporter_urls()[f"exporter.{handle.topo.hosts[0].crush_name}"]
        module = next(iter(handle.module_urls().values())) + "metrics"  # mgr.x, the active one
        for url, family in ((exporter, "ceph_perfwatch_exporter_http_refused_total"),
                            (module, "ceph_perfwatch_http_refused_total")):  # fmt: skip
            assert get(url, good, "wrong password")[0] == 401
            assert get(url, good, None)[0] == 401
            with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
                get(url, no_client_cert, password)
            status, body = get(url.replace("https://", "http://"), None, None)
            assert status == 400 and b"speaks HTTPS" in body
            status, body = get(url, good, password)
            assert status == 200
            counts = refused(body, family)
            print(f"{url}: refused {counts}")
            assert counts["auth_failed"] >= 1 and counts["auth_missing"] >= 1
            assert counts["tls_handshake_failed"] >= 1 and counts["plain_http_to_tls"] >= 1
