"""Fixtures shared by the unit tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lab import certs


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A CA and what the TLS tests need from it (dev/lab/certs.py, openssl): two server certificates for
    127.0.0.1 (one to rotate to), Prometheus's client certificate, a client of the CA with another name,
    and a client of another CA."""
    folder = tmp_path_factory.mktemp("pki")
    ca = certs.make_ca(folder, "test-ca")
    other_ca = certs.make_ca(folder, "other-ca")
    return {
        "ca": ca,
        "server": certs.make_leaf(folder, "server", ca, ["127.0.0.1", "localhost"]),
        "rotated": certs.make_leaf(folder, "rotated", ca, ["127.0.0.1", "localhost"]),
        "prometheus": certs.make_leaf(folder, "prometheus", ca, ["prometheus"], client=True),
        "intruder": certs.make_leaf(folder, "intruder", ca, ["intruder"], client=True),
        "foreign": certs.make_leaf(folder, "foreign", other_ca, ["prometheus"], client=True),
    }


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory with a short path, for AF_UNIX sockets (sun_path holds 108 bytes; pytest's tmp_path can be
    longer)."""
    path = tempfile.mkdtemp(prefix="pwsock-", dir="/tmp")
    try:
        yield Path(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)
