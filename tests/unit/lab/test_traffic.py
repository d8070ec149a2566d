"""dev/lab/traffic.py, the non-Ceph traffic of `lab saturate network --network other`: paced, bounded, one address."""

import socket
import subprocess
import sys
import time

from lab import traffic


def test_it_sends_at_the_rate_asked_to_the_one_address_and_stops_when_told() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sink:
        sink.bind(("127.0.0.1", 0))
        sink.settimeout(0.2)
        port = sink.getsockname()[1]
        started = time.monotonic()
        sent = traffic.send("127.0.0.1", port, 2_000_000, 0.5)
        took = time.monotonic() - started
        received = 0
        while True:
            try:
                received += len(sink.recv(65536))
            except TimeoutError:
                break
    assert 0.45 <= took < 1.5
    assert 0.8e6 <= sent <= 1.2e6 + traffic.DATAGRAM  # 2 MB/s for 0.5 s, in 16 KiB datagrams
    assert received > 0


def test_its_arguments_are_bounded() -> None:
    for bad in (["--bytes-per-second", "0"], ["--bytes-per-second", "1e6", "--seconds", "1e9"]):
        proc = subprocess.run(
            [sys.executable, traffic.__file__, "--to", "127.0.0.1", *bad], capture_output=True, text=True, timeout=30
        )
        assert proc.returncode == 2 and "must be in" in proc.stderr
