"""Certificates for a lab that serves its metrics over TLS (`up --secure`), and for the tests: a CA of the
lab's own, server certificates for the addresses its endpoints listen on, a client certificate for its
Prometheus. Made with the openssl command line (Debian's openssl); EC P-256 keys, as quick to make as to use."""

from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass
from pathlib import Path

CURVE = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
CA_DAYS = 3650
LEAF_DAYS = 825  # the most a client trusts for a leaf certificate


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path


def _openssl(*args: str) -> None:
    proc = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {args[0]}: {proc.stderr.strip()}")


def make_ca(folder: Path, name: str) -> KeyPair:
    """A self-signed CA in folder/<name>.crt and .key."""
    folder.mkdir(parents=True, exist_ok=True)
    pair = KeyPair(folder / f"{name}.crt", folder / f"{name}.key")
    _openssl(
        "req", "-x509", *CURVE, "-keyout", str(pair.key), "-out", str(pair.cert), "-days", str(CA_DAYS),
        "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    pair.key.chmod(0o600)
    return pair


def subject_alt_names(names: list[str]) -> str:
    """openssl's subjectAltName value: IP: for addresses, DNS: for the rest."""

    def one(name: str) -> str:
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return f"DNS:{name}"
        return f"IP:{name}"

    return ",".join(one(name) for name in names)


def make_leaf(folder: Path, name: str, ca: KeyPair, names: list[str], client: bool = False) -> KeyPair:
    """A certificate signed by `ca` for `names` (server use, or client use with client=True)."""
    pair = KeyPair(folder / f"{name}.crt", folder / f"{name}.key")
    csr = folder / f"{name}.csr"
    ext = folder / f"{name}.ext"
    usage = "clientAuth" if client else "serverAuth"
    ext.write_text(
        f"basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        f"extendedKeyUsage={usage}\nsubjectAltName={subject_alt_names(names)}\n"
    )
    _openssl("req", "-new", *CURVE, "-keyout", str(pair.key), "-out", str(csr), "-subj", f"/CN={name}")
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(ca.cert), "-CAkey", str(ca.key), "-CAcreateserial",
        "-out", str(pair.cert), "-days", str(LEAF_DAYS), "-extfile", str(ext),
    )  # fmt: skip
    csr.unlink()
    ext.unlink()
    pair.key.chmod(0o600)
    return pair
