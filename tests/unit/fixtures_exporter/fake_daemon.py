"""A stand-in Ceph daemon for the exporter's privilege tests: a real process, started as the test chooses
(a copy of python named ceph-osd, as the ceph user, say), that answers its admin socket the way a daemon
does: `config get <var>` from --fsid/--osd-data, `perf dump` with an empty objecter. Only the kernel's
permission checks are under test; the daemon's answers are just enough to read."""

import json
import os
import socket
import struct
import sys


def option(name: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else ""


def answer(command: dict) -> bytes:
    if command.get("prefix") == "config get":
        var = command.get("var", "")
        value = {"fsid": option("--fsid"), "osd_data": option("--osd-data")}.get(var, "")
        return json.dumps({var: value}).encode()
    if command.get("prefix") == "perf dump":
        return json.dumps({"objecter": {"osdop_call": 0}}).encode()
    return b"ERROR: (22) Invalid argument"


def main() -> None:
    path = option("--admin-socket")
    if os.path.exists(path):
        os.unlink(path)
    os.umask(0o022)  # a daemon's socket: srwxr-xr-x
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    while True:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while not data.endswith(b"\0"):
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            try:
                reply = answer(json.loads(data.rstrip(b"\0") or b"{}"))
            except ValueError:
                reply = b"ERROR: (22) Invalid argument"
            conn.sendall(struct.pack(">I", len(reply)) + reply)


main()
