import logging
import socket
import time
import urllib.request

from perfwatch import server
from perfwatch.web import Response


def app(path: str, gz: bool) -> Response:
    return Response(200, "text/plain", b"ok", {})


def test_connections_beyond_the_cap_are_dropped_and_service_resumes() -> None:
    srv = server.HttpServer(app, "127.0.0.1", 0, logging.getLogger("t"))
    srv.start()
    port = srv._server.server_address[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}/"
    idle = []
    try:
        assert urllib.request.urlopen(url, timeout=5).read() == b"ok"
        for _ in range(server.MAX_CONNECTIONS):  # each holds a handler thread, sending nothing
            idle.append(socket.create_connection(("127.0.0.1", port)))
        time.sleep(0.3)
        extra = socket.create_connection(("127.0.0.1", port))
        extra.settimeout(5)
        extra.sendall(b"GET / HTTP/1.0\r\n\r\n")
        assert extra.recv(100) == b"", "a connection over the cap is closed unanswered"
        extra.close()
        for sock in idle:
            sock.close()
        idle.clear()
        time.sleep(0.3)
        assert urllib.request.urlopen(url, timeout=5).read() == b"ok"
    finally:
        for sock in idle:
            sock.close()
        srv.stop()
