"""Traffic that is not Ceph's: UDP datagrams from a lab host's eth2 to the lab's sink, at a steady rate.

`lab saturate network --network other` runs it inside the host's namespace (by path, standard library
only), so the host has a busy NIC that carries none of Ceph's traffic, as a backup or management NIC does.
It only ever sends to the one address it is given (the lab's own bridge), stops on SIGTERM, and stops by
itself after --seconds, so a lab that lost track of it cannot leave it running.
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import time

DATAGRAM = 16 * 1024
TICK = 0.01


def send(to: str, port: int, bytes_per_second: float, seconds: float) -> int:
    """Sends for `seconds`; the bytes handed to the kernel (a full qdisc drops some, which is the point)."""
    family = socket.AF_INET6 if ipaddress.ip_address(to).version == 6 else socket.AF_INET
    payload = b"\0" * DATAGRAM
    sent = skipped = 0
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        start = time.monotonic()
        while (now := time.monotonic()) - start < seconds:
            due = bytes_per_second * (now - start)
            while sent + skipped < due:
                try:
                    sock.sendto(payload, (to, port))
                except OSError:  # the socket buffer or the shaped queue is full: the link is busy, as wanted
                    skipped = int(due) - sent  # skip what could not be sent rather than burst later
                    break
                sent += DATAGRAM
            time.sleep(TICK)
    return sent


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--to", required=True, help="the lab's sink address")
    p.add_argument("--port", type=int, default=9, help="UDP port (9, discard)")
    p.add_argument("--bytes-per-second", type=float, required=True)
    p.add_argument("--seconds", type=float, default=3600.0)
    args = p.parse_args()
    if not 0 < args.bytes_per_second <= 2e9 or not 0 < args.seconds <= 86400:
        p.error("--bytes-per-second must be in (0, 2e9] and --seconds in (0, 86400]")
    send(args.to, args.port, args.bytes_per_second, args.seconds)


if __name__ == "__main__":
    main()
