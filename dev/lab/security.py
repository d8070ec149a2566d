"""A lab whose perfwatch endpoints ask for TLS, a client certificate and a password (`up --secure`), as an
operator turns them on: the module's certificate and key as config-keys (mgr/perfwatch/crt, .../key) and
its client CA and user through its commands; each host exporter with a --web.config.file in
exporter-toolkit's format; the lab's Prometheus scraping both over https with a client certificate and
basic auth. Everything lives in <lab>/tls, made at `up` (the CA is the lab's own; nothing leaves it).
"""

from __future__ import annotations

import base64
import dataclasses
import os
import secrets
import ssl
from pathlib import Path
from typing import Any

from . import certs

USER = "prometheus"
CLIENT_NAME = "prometheus"  # the client certificate's name, the only one the exporters allow


@dataclasses.dataclass(frozen=True)
class LabTls:
    folder: Path

    @property
    def ca(self) -> certs.KeyPair:
        return certs.KeyPair(self.folder / "lab-ca.crt", self.folder / "lab-ca.key")

    @property
    def server(self) -> certs.KeyPair:
        return certs.KeyPair(self.folder / "endpoints.crt", self.folder / "endpoints.key")

    @property
    def client(self) -> certs.KeyPair:
        return certs.KeyPair(self.folder / "prometheus.crt", self.folder / "prometheus.key")

    @property
    def password_file(self) -> Path:
        return self.folder / "prometheus.password"

    @property
    def web_config(self) -> Path:
        return self.folder / "web.yml"


def tls_of(directory: Path) -> LabTls:
    return LabTls(directory / "tls")


def bcrypt_hash(password: str) -> str:
    """A bcrypt hash, as `htpasswd -nBC 10` makes them (Debian's python3-bcrypt)."""
    import bcrypt  # the lab's tools only; the exporter only checks hashes

    return bytes(bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=10))).decode()


def web_config_text(tls: LabTls, password_hash: str) -> str:
    """The exporters' web config: TLS with a client certificate of the lab's CA named prometheus, and
    the user prometheus. YAML (and readable as such by node_exporter)."""
    return (
        "# made by `python3 -m lab up --secure`\n"
        "tls_server_config:\n"
        f"  cert_file: {tls.server.cert.name}\n"
        f"  key_file: {tls.server.key.name}\n"
        "  client_auth_type: RequireAndVerifyClientCert\n"
        f"  client_ca_file: {tls.ca.cert.name}\n"
        f"  client_allowed_sans: [{CLIENT_NAME}]\n"
        "basic_auth_users:\n"
        f"  {USER}: {password_hash}\n"
    )


def make(directory: Path, addresses: list[str]) -> LabTls:
    """The lab's CA, a certificate for its endpoints' addresses, Prometheus's client certificate and
    password, and the exporters' web config."""
    tls = tls_of(directory)
    tls.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    tls.folder.chmod(0o700)  # also when it was there already
    ca = certs.make_ca(tls.folder, "lab-ca")
    certs.make_leaf(tls.folder, "endpoints", ca, sorted(set(addresses)))
    certs.make_leaf(tls.folder, "prometheus", ca, [CLIENT_NAME], client=True)
    password = secrets.token_urlsafe(24)
    fd = os.open(tls.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(password + "\n")
    tls.web_config.write_text(web_config_text(tls, bcrypt_hash(password)))
    return tls


def password(tls: LabTls) -> str:
    return tls.password_file.read_text().strip()


def scrape_settings(tls: LabTls) -> dict[str, Any]:
    """What a Prometheus scrape job needs to reach the secured endpoints."""
    return {
        "scheme": "https",
        "tls_config": {
            "ca_file": str(tls.ca.cert),
            "cert_file": str(tls.client.cert),
            "key_file": str(tls.client.key),
        },
        "basic_auth": {"username": USER, "password_file": str(tls.password_file)},
    }


@dataclasses.dataclass(frozen=True)
class HttpClient:
    """How the lab's own probes reach an endpoint: a TLS context and headers (none for plain HTTP)."""

    context: ssl.SSLContext | None = None
    headers: tuple[tuple[str, str], ...] = ()


def client(tls: LabTls | None) -> HttpClient:
    if tls is None:
        return HttpClient()
    context = ssl.create_default_context(cafile=str(tls.ca.cert))
    context.load_cert_chain(str(tls.client.cert), str(tls.client.key))
    token = base64.b64encode(f"{USER}:{password(tls)}".encode()).decode()
    return HttpClient(context, (("Authorization", "Basic " + token),))


def describe(tls: LabTls) -> dict[str, str]:
    """For `lab status`: where the lab's CA, client certificate and password are."""
    return {
        "ca": str(tls.ca.cert),
        "client_cert": str(tls.client.cert),
        "client_key": str(tls.client.key),
        "user": USER,
        "password_file": str(tls.password_file),
    }
