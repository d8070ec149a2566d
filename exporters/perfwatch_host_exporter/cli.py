"""Command line: options, logging, the HTTP server (the module's perfwatch.common.server), clean shutdown."""

import argparse
import ipaddress
import logging
import re
import signal
import socket
import sys
import threading
from typing import Any, Dict, List, NoReturn, Optional

from perfwatch.common.server import HttpServer
from perfwatch.common.server.security import Security
from perfwatch.common.version import __version__

from . import fsid, network, nic_map, trust
from .app import make_app
from .collection_loop import CollectionLoop
from .collector import HostCollector, HostSettings
from .fsroot import Root
from .webconfig import WebConfigError, WebConfigSecurity

PROG = "perfwatch-host-exporter"
DEFAULT_PORT = 9285
DEFAULT_INTERVAL = 15.0

log = logging.getLogger("perfwatch_host_exporter")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit status 2 (argparse's usage block is left out)."""
        sys.stderr.write("{}: error: {}\n".format(self.prog, message))
        sys.exit(2)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a port number: {!r}".format(text)) from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError("port {} is out of range 1-65535".format(port))
    return port


def _address(text: str) -> str:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not an IP address: {!r}".format(text)) from None
    return text


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number of seconds: {!r}".format(text)) from None
    if not 0 < value <= 60:
        raise argparse.ArgumentTypeError("{} is outside (0, 60] seconds".format(text))
    return value


def _interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number of seconds: {!r}".format(text)) from None
    if not 1 <= value <= 300:
        raise argparse.ArgumentTypeError("{} is outside [1, 300] seconds".format(text))
    return value


def _user(text: str) -> trust.User:
    try:
        return trust.parse_user(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text.strip()


def _fsid(text: str) -> str:
    value = fsid.normalise(text)
    if value is None:
        raise argparse.ArgumentTypeError("not a cluster fsid (a UUID): {!r}".format(text))
    return value


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Per-host Prometheus exporter for Ceph daemons: CPU, cgroup throttling, OSD devices, "
        "RGW bucket-index work, link capacity. Serves /metrics.",
    )
    p.add_argument("--version", action="version", version="%(prog)s {}".format(__version__))
    p.add_argument("--listen-address", type=_address, default="0.0.0.0", help="IP address to bind (default 0.0.0.0)")
    p.add_argument("--port", type=_port, default=DEFAULT_PORT, help="TCP port (default {})".format(DEFAULT_PORT))
    p.add_argument(
        "--hostname", type=_name, default=None, help="the hostname label on every sample (default: this host's name)"
    )
    p.add_argument("--cluster", type=_name, default=None, help="only daemons of this cluster name (default: all)")
    p.add_argument(
        "--cluster-fsid",
        type=_fsid,
        default=None,
        metavar="FSID",
        help="only daemons of the cluster with this fsid (default: all; each daemon's series carry its "
        "fsid as the cluster label)",
    )
    p.add_argument(
        "--same-netns",
        action="store_true",
        help="only daemons in the exporter's own network namespace (one exporter per simulated host)",
    )
    p.add_argument(
        "--asok-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="also look for admin sockets as DIR/$cluster-$name.asok (repeatable; tried after --admin-socket "
        "in the daemon's argv and /var/run/ceph)",
    )
    p.add_argument(
        "--asok-timeout", type=_seconds, default=2.0, metavar="SECONDS", help="admin socket timeout (default 2)"
    )
    p.add_argument(
        "--collect-interval",
        type=_interval,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help="seconds between collections, which run in the background; /metrics serves the last one "
        "(default {:g}; 1-300)".format(DEFAULT_INTERVAL),
    )
    p.add_argument(
        "--daemon-user",
        type=_user,
        action="append",
        default=[],
        metavar="USER",
        help="also trust processes of this user (a name of this host or a uid) as Ceph daemons; repeatable. "
        "Always trusted: root, the ceph user, the owners of cephadm's /var/lib/ceph/<fsid> directories. "
        "Rook and other containers run the daemons as uid 167",
    )
    p.add_argument(
        "--daemon-counters",
        action="store_true",
        help="also read the counters of this host's OSDs (BlueStore, RocksDB, BlueFS, mempools) from their admin "
        "sockets, as the mgr module's families: for large clusters, with the module's daemon_counters_source "
        "set to exporters on every host (default: the module reads them)",
    )
    p.add_argument(
        "--net-device-exclude",
        type=_regex,
        default=network.DEFAULT_EXCLUDE,
        metavar="REGEX",
        help="interfaces to leave out of the link capacity rows (default: lo and container/pod interfaces)",
    )
    p.add_argument(
        "--web.config.file",
        dest="web_config_file",
        default=None,
        metavar="FILE",
        help="TLS and basic auth, in exporter-toolkit's web config format (as node_exporter's); read again "
        "when it or a file it names changes (default: plain HTTP, no auth)",
    )
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")
    return p


def _regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError("not a regular expression: {}".format(exc)) from exc
    return text


def main(argv: Optional[List[str]] = None) -> int:
    args = parser().parse_args(argv)
    level = getattr(logging, args.log_level.upper())
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # the module's server logs its own start line; ours says more, so its info is quieted
    http_log = logging.getLogger("perfwatch_host_exporter.http")
    http_log.setLevel(level if level <= logging.DEBUG else max(level, logging.WARNING))
    hostname = args.hostname or socket.gethostname()
    _, problems = trust.users(Root("/"), args.daemon_user)
    unknown = [p for p in problems if p.startswith("--daemon-user")]
    if unknown:
        sys.stderr.write("{}: error: {}\n".format(PROG, "; ".join(unknown)))
        return 2
    settings = HostSettings(
        hostname=hostname,
        cluster=args.cluster,
        cluster_fsid=args.cluster_fsid,
        same_netns=args.same_netns,
        asok_dirs=tuple(args.asok_dir),
        asok_timeout=args.asok_timeout,
        net_device_exclude=args.net_device_exclude,
        daemon_users=tuple(args.daemon_user),
        daemon_counters=args.daemon_counters,
    )
    security: Security = Security()
    if args.web_config_file:
        try:
            security = WebConfigSecurity(args.web_config_file, log)
        except WebConfigError as exc:
            sys.stderr.write("{}: error: --web.config.file {}\n".format(PROG, exc))
            return 2
    collector = HostCollector(settings, tc=network.default_tc(), ip=nic_map.default_ip(), log=log)
    loop = CollectionLoop(collector.collect, hostname, args.collect_interval, log)

    def http_refusals() -> Dict[str, int]:
        return server.refusals()

    app = make_app(loop.parts, loop.health, hostname, http_refusals)
    server = HttpServer(app, args.listen_address, args.port, http_log, security=security)
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        server.start()
    except OSError as exc:
        sys.stderr.write("{}: cannot listen on {}:{}: {}\n".format(PROG, args.listen_address, args.port, exc))
        return 1
    loop.start()
    log.info(
        "serving %s://%s:%d/metrics (%s) for hostname %s; collecting every %g s",
        "https" if security.tls() is not None else "http",
        args.listen_address,
        args.port,
        security.describe(),
        hostname,
        args.collect_interval,
    )
    status = 0
    while not stop.wait(1.0):
        if not server.alive():  # its loop ended on a bug: exit, so that systemd or the kubelet restarts it
            log.error("the HTTP server has stopped; exiting (status 1) to be restarted")
            status = 1
            break
    log.info("stopping")
    server.stop()
    loop.stop()
    return status
