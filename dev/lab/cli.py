"""`python3 -m lab up|down|status|env|start|stop|saturate|clear|load`: a real Ceph cluster on this machine."""

from __future__ import annotations

import argparse
import faulthandler
import json
import shlex
import signal
import sys
from pathlib import Path

from . import bootstrap, knobs, load, mountns, osd_devices, releases, rootfs
from .cluster import Lab, LabAlreadyRunning
from .config import (
    DB_DEVICES,
    MAX_OSDS_PER_DEVICE,
    MEDIA,
    MODULE_SOURCES,
    LabConfig,
    LabError,
    load_config,
    resolve_directory,
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m lab", description=__doc__)
    p.add_argument("--dir", help="lab directory (default: $PERFWATCH_LAB_DIR, else .lab/ in the checkout)")
    sub = p.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start a lab and wait for HEALTH_OK")
    defaults = LabConfig()
    up.add_argument(
        "--hosts",
        type=int,
        default=defaults.hosts,
        help="simulated hosts; more than 1 puts each in its own network namespace",
    )
    up.add_argument(
        "--release",
        default=None,
        help="Ceph release: "
        + ", ".join(
            f"{r.name} ({r.series}, {'Debian ' + r.suite + ' rootfs' if r.suite else 'this machine'})"
            for r in releases.RELEASES
        )
        + "; a name, a series or a version",
    )
    up.add_argument("--osds", type=int, default=defaults.osds, help="OSD count, spread over the hosts")
    up.add_argument("--osd-size", type=float, default=defaults.osd_size_gib, help="GiB per OSD device (sparse)")
    up.add_argument(
        "--backing",
        choices=("loop", "file"),
        default=defaults.osd_backing,
        help="loop: BlueStore on a loop device over a file (visible in /proc/diskstats); "
        "file: BlueStore on the file itself",
    )
    up.add_argument(
        "--media",
        choices=MEDIA,
        default=defaults.media,
        help="disk: the OSD devices say they rotate (the kernel's default for loop devices); flash: they say "
        "they do not (queue/rotational 0), so BlueStore and the host exporter take them for SSDs",
    )
    up.add_argument(
        "--osds-per-device",
        type=int,
        default=defaults.osds_per_device,
        help=f"OSDs of a host sharing one device, one partition each (1 to {MAX_OSDS_PER_DEVICE}; the campaigns "
        "split each NVMe into two or four OSDs)",
    )
    up.add_argument(
        "--db-device",
        choices=DB_DEVICES,
        default=defaults.db_device,
        help="shared: every OSD of a host keeps its RocksDB/WAL (block.db) on a partition of one more device of "
        "the host, as the campaigns' nodes did on one NVMe or Optane device",
    )
    up.add_argument("--db-size", type=float, default=defaults.db_size_gib, help="GiB of each OSD's block.db")
    up.add_argument("--name", default=defaults.name, help="lab name: prefix of its namespaces and links")
    up.add_argument("--mon-port", type=int, default=defaults.mon_port)
    up.add_argument("--rgw-port", type=int, default=defaults.rgw_port)
    up.add_argument(
        "--module-port",
        type=int,
        default=defaults.module_port,
        help="port the perfwatch module serves metrics on in this lab",
    )
    up.add_argument(
        "--exporter-port",
        type=int,
        default=defaults.exporter_port,
        help="port of the perfwatch host exporter on each simulated host",
    )
    up.add_argument(
        "--node-exporter-port",
        type=int,
        default=defaults.node_exporter_port,
        help="port of node_exporter on each simulated host",
    )
    up.add_argument(
        "--prometheus-port",
        type=int,
        default=defaults.prometheus_port,
        help="port of the lab's Prometheus, on the lab's core address",
    )
    up.add_argument(
        "--alertmanager-port",
        type=int,
        default=defaults.alertmanager_port,
        help="port of the lab's Alertmanager, on the lab's core address",
    )
    up.add_argument(
        "--ceph-metrics-port",
        type=int,
        default=defaults.ceph_metrics_port,
        help="port of Ceph's prometheus mgr module; other mgrs take the next ports no other option uses",
    )
    up.add_argument(
        "--subnet-index",
        type=int,
        default=defaults.subnet_index,
        help="with --hosts > 1, hosts live in 198.18.<index>.0/24",
    )
    up.add_argument(
        "--cluster-network",
        action="store_true",
        help="with --hosts > 1, each host also gets eth1 for Ceph's cluster network (198.19.<index>.0/25; the "
        "OSDs replicate and heartbeat over it) and eth2, a link that carries no Ceph traffic "
        "(198.19.<index>.128/25), as real hosts have",
    )
    up.add_argument(
        "--exporter-counters",
        action="store_true",
        help="the host exporters read the OSDs' counters from their admin sockets (--daemon-counters) and the "
        "module leaves them to them (daemon_counters_source=exporters), as on a large cluster",
    )
    up.add_argument(
        "--rootfs",
        help="run Ceph from this filesystem tree (a container image's, e.g. as `buildah mount` shows it) instead "
        "of the release's cached rootfs; the release is what it holds, and the lab never writes into it",
    )
    up.add_argument(
        "--module-from",
        choices=MODULE_SOURCES,
        default=defaults.module_from,
        help="where the mgr loads perfwatch from: this checkout (default) or the Ceph it runs "
        "(/usr/share/ceph/mgr/perfwatch, as a package or an image installs it; no mgr module path is set)",
    )
    up.add_argument(
        "--install",
        action="append",
        default=[],
        metavar="DEB",
        help="a Debian package to install with dpkg before the cluster is made (repeatable), into the lab's own "
        "layer over the rootfs of a release that runs from one; the rootfs itself is never changed",
    )
    up.add_argument(
        "--secure",
        action="store_true",
        help="perfwatch's endpoints (the module's, the host exporters') ask for TLS, a client certificate "
        "and a password, which the lab's Prometheus gives; certificates in <lab>/tls (`status` says where)",
    )
    sub.add_parser("down", help="stop every process the lab started and remove all it created")
    st = sub.add_parser("status", help="daemons, PIDs, health")
    st.add_argument("--format", choices=("plain", "json"), default="plain")
    sub.add_parser("env", help="print the export line that points the ceph CLI (of the lab's release) at the lab")
    rfs = sub.add_parser("rootfs", help="build (or show) the cached rootfs of a release that runs from one")
    rfs.add_argument("--release", required=True, help="reef, tentacle, ... (see `up --help`)")
    rfs.add_argument(
        "--rebuild", action="store_true", help="build afresh even when one is cached (stop its labs first)"
    )
    for verb, what in (
        ("start", "start a stopped daemon of the lab again"),
        ("stop", "stop one daemon of the lab (SIGTERM; --kill for SIGKILL)"),
    ):
        sp = sub.add_parser(verb, help=what)
        sp.add_argument("daemon", help="mon.a, mgr.x, osd.0, client.rgw.<name>, ...")
        if verb == "stop":
            sp.add_argument("--kill", action="store_true", help="SIGKILL, as a crash would")
    sat = sub.add_parser("saturate", help="make the CPU, the media or the network of part of the lab the bottleneck")
    knob = sat.add_subparsers(dest="knob", required=True)
    cpu = knob.add_parser("cpu", help="a cgroup CPU quota on OSD processes (each OSD gets --cores)")
    which = cpu.add_mutually_exclusive_group(required=True)
    which.add_argument("--osd", type=int, action="append", help="an OSD id (repeatable)")
    which.add_argument("--host", help="every OSD of this host (index, h2, host2 or its CRUSH name)")
    cpu.add_argument("--cores", type=float, required=True, help="CPU per OSD, in cores (0.2 = a fifth of a core)")
    media = knob.add_parser(
        "media", help="limit the disk under an OSD's loop device: the device shows busy, its queue grows"
    )
    which_media = media.add_mutually_exclusive_group(required=True)
    which_media.add_argument("--osd", type=int, action="append", help="an OSD id (repeatable)")
    which_media.add_argument("--host", help="every OSD of this host (index, h2, host2 or its CRUSH name)")
    media.add_argument(
        "--device",
        choices=tuple(osd_devices.ROLE_LINKS),
        default="block",
        help="which of the OSDs' devices: block (default) or db (the shared DB device of --db-device shared)",
    )
    media.add_argument("--iops", type=int, default=300, help="read and write IOPS the OSD gets (default 300)")
    media.add_argument(
        "--mbps",
        type=float,
        default=10.0,
        help="read and write bandwidth the OSD gets, MB/s (default 10; 0: no bandwidth cap). BlueStore "
        "merges small writes into large WAL writes, so an IOPS cap alone hardly slows `osd bench`",
    )
    netw = knob.add_parser("network", help="shape a host's link with tc, both directions")
    netw.add_argument(
        "--host",
        required=True,
        help="index, h2, host2 or the CRUSH host name; or client, the load client's link (a client-side limit)",
    )
    netw.add_argument("--rate", required=True, help="tc rate: 80mbit, 1gbit, ...")
    netw.add_argument(
        "--network",
        choices=knobs.NETWORKS,
        default="public",
        help="which link of the host: public (eth0, default), cluster (eth1) or other (eth2, which carries "
        "no Ceph traffic: the knob also fills it, from the host to the lab's sink); cluster and other need a "
        "lab started with --cluster-network",
    )
    clear = sub.add_parser("clear", help="undo the knobs (all, or one kind)")
    clear.add_argument("knob", nargs="?", choices=knobs.KINDS)
    load_p = sub.add_parser("load", help="drive client load from the lab's client namespace (librbd)")
    load_p.add_argument("--pattern", required=True, choices=tuple(load.PATTERNS))
    load_p.add_argument("--seconds", type=float, default=30.0)
    load_p.add_argument("--pool", default=load.POOL, help=f"the pool to load (made if missing; default {load.POOL})")
    load_p.add_argument(
        "--client", metavar="NAME", help="as client.NAME (made, RBD caps on --pool only), not the admin"
    )
    load_p.add_argument(
        "--pg-num", type=int, default=load.POOL_PGS, help=f"PGs of --pool when it is made (default {load.POOL_PGS})"
    )
    return p


def release_name(release: str | None, tree: str | None) -> str:
    """--release as a release name; with --rootfs, the release of the Ceph that tree holds (and a --release
    given too must be that one)."""
    if not tree:
        return releases.resolve(release or releases.DEFAULT).name
    root = Path(tree)
    if not root.is_dir():
        raise LabError(f"--rootfs {tree}: not a directory (give the path of a filesystem tree)")
    version = rootfs.tree_ceph_version(root)
    held = releases.of_version(version, f"--rootfs {tree}")
    if release and releases.resolve(release) != held:
        raise LabError(f"--rootfs {tree} holds Ceph {version} ({held.name}), not --release {release}")
    return held.name


def _print_status(status: dict) -> None:
    print(f"lab      {status['directory']}")
    where = f"rootfs {status['rootfs']}" if status["rootfs"] else "this machine's packages"
    print(f"release  {status['release']}: Ceph {status['ceph_version']} ({where})")
    installed = f"; installed there: {', '.join(status['installed'])}" if status["installed"] else ""
    print(f"module   perfwatch from the {status['module_from']}{installed}")
    if status["mount_namespace"]:
        ns = status["mount_namespace"]
        print(f"mountns  pid {ns['pid']:<8} {'running' if ns['running'] else 'NOT RUNNING'}")
    print(f"health   {status['health'] or 'mon not running'}")
    print(f"rgw      {status['rgw']}")
    for mgr, url in status["module_endpoints"].items():
        print(f"metrics  mgr.{mgr:<15} {url}metrics")
    for mgr, url in status["ceph_metrics"].items():
        print(f"ceph     mgr.{mgr:<15} {url}metrics   (Ceph's prometheus module)")
    for name, url in status["monitoring"].items():
        print(f"monitor  {name:<19} {url}")
    for host in status["hosts"]:
        where = f"netns {host['netns']} {host['address']}" if host["netns"] else host["address"]
        print(f"host     {host['name']:<14} {where:<28} osds {host['osds']}")
    for name, d in status["daemons"].items():
        print(f"daemon   {name:<20} pid {d['pid']:<8} {'running' if d['running'] else 'NOT RUNNING'}")
    for osd, dev in status["loop_devices"].items():
        print(f"device   osd.{osd:<16} {dev}")
    for name, url in status["exporters"].items():
        print(f"exporter {name:<29} {url}")
    if status.get("tls"):
        tls = status["tls"]
        print(f"tls      CA {tls['ca']}; client certificate {tls['client_cert']}")
        print(f"tls      user {tls['user']}, password in {tls['password_file']}")
    client = status["client"]
    print(f"client   {('netns ' + client['netns']) if client['netns'] else 'root namespace'} {client['address']}")
    if not status["knobs"]:
        print("knobs    none (`python3 -m lab saturate cpu|media|network ...`)")
    for key, knob in status["knobs"].items():
        print(f"knob     {key:<29} {knob['setting']}")


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM unwinds like Ctrl-C: a running load stops its bench on the way out


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupted)
    # A command that does not end when told to prints every thread's stack on SIGUSR1 (tests send it
    # before they kill one: procs.stop_child), so the next such hang says where it hung.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    directory: Path = resolve_directory(args.dir)
    try:
        if args.command == "up":
            config = LabConfig(
                directory=directory,
                name=args.name,
                hosts=args.hosts,
                osds=args.osds,
                osd_size_gib=args.osd_size,
                osd_backing=args.backing,
                media=args.media,
                osds_per_device=args.osds_per_device,
                db_device=args.db_device,
                db_size_gib=args.db_size,
                mon_port=args.mon_port,
                rgw_port=args.rgw_port,
                module_port=args.module_port,
                exporter_port=args.exporter_port,
                node_exporter_port=args.node_exporter_port,
                prometheus_port=args.prometheus_port,
                alertmanager_port=args.alertmanager_port,
                ceph_metrics_port=args.ceph_metrics_port,
                subnet_index=args.subnet_index,
                cluster_network=args.cluster_network,
                exporter_counters=args.exporter_counters,
                release=release_name(args.release, args.rootfs),
                release_version=releases.exact_version(args.release or ""),
                rootfs=str(Path(args.rootfs).absolute()) if args.rootfs else "",
                module_from=args.module_from,
                install=tuple(str(Path(d).absolute()) for d in args.install),
                secure=args.secure,
            )
            lab = Lab(config)
            try:
                seconds = lab.up()
            except LabAlreadyRunning as exc:
                print(f"lab: {exc}")
                return 0
            print(
                f"lab: Ceph {lab.state.ceph_version} ({lab.config.release}): "
                f"HEALTH_OK in {seconds:.1f} s ({config.osds} OSDs on {config.hosts} host(s)); "
                f"to use the ceph CLI: {env_line(directory)}"
            )
            print("lab: " + ", ".join(f"{name} {url}" for name, url in lab.monitoring_urls().items()))
            return 0
        if args.command == "down":
            if load_config(directory) is None:
                print(f"lab: no lab in {directory}; nothing to do")
                return 0
            problems = Lab.open(directory).down()
            if problems:
                print("lab: down left these behind:\n  " + "\n  ".join(problems), file=sys.stderr)
                return 1
            print(f"lab: stopped and removed {directory}")
            return 0
        if args.command == "rootfs":
            release = releases.resolve(args.release)
            if not release.from_rootfs:
                version = rootfs.installed_ceph_version(Path("/")) or "not installed"
                print(f"lab: {release.name} runs from this machine's packages (Ceph {version}); no rootfs")
                return 0
            root, version = rootfs.ensure(release, lambda msg: print(f"lab: {msg}"), rebuild=args.rebuild)
            if releases.exact_version(args.release):
                release.check_exact(releases.exact_version(args.release), version, str(root))
            print(f"lab: {release.name}: Ceph {version} in {root}")
            return 0
        lab = Lab.open(directory)
        if args.command == "status":
            status = lab.status()
            if args.format == "json":
                print(json.dumps(status, indent=2))
            else:
                _print_status(status)
            return 0
        if args.command == "env":
            print(env_line(directory))
            return 0
        if args.command == "start":
            print(f"lab: {args.daemon} {'started' if lab.start_daemon(args.daemon) else 'was already running'}")
            return 0
        if args.command == "stop":
            stopped = lab.stop_daemon(args.daemon, kill=args.kill)
            print(f"lab: {args.daemon} {'stopped' if stopped else 'was not running'}")
            return 0
        if args.command == "saturate":
            return _saturate(lab, args)
        if args.command == "clear":
            cleared, problems = knobs.clear(lab.state, lab.save_state, args.knob)
            for problem in problems:
                print(f"lab: could not undo: {problem}", file=sys.stderr)
            print(f"lab: cleared {', '.join(cleared) if cleared else 'nothing (no such knob was on)'}")
            return 1 if problems else 0
        if args.command == "load":
            result = load.run(
                lab.config.conf_path,
                lab.dir,
                lab.topo.client,
                args.pattern,
                args.seconds,
                args.pool,
                args.client,
                args.pg_num,
            )
            size = load.PATTERNS[args.pattern].io_size
            print(
                f"lab: {result.pattern} from {result.where}: {result.seconds:.0f} s, {result.ops} ops, "
                f"{result.iops:.0f} IOPS, {result.bytes_per_second(size) / 1e6:.1f} MB/s"
            )
            return 0
    except LabError as exc:
        print(f"lab: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("lab: interrupted", file=sys.stderr)
        return 130
    return 2


def _osds_of(lab: Lab, args: argparse.Namespace) -> list[int]:
    """The OSDs a knob names: --osd (repeatable) or every OSD of --host; each must exist."""
    if args.host is not None:
        try:
            osds = lab.topo.osds_on(lab.topo.host_named(args.host))
        except KeyError as exc:
            raise LabError(str(exc.args[0])) from exc
    else:
        osds = list(dict.fromkeys(args.osd))
    for osd in osds:
        lab.check_osd(osd)
    return osds


def _saturate(lab: Lab, args: argparse.Namespace) -> int:
    if args.knob == "cpu":
        made = knobs.saturate_cpu(lab.state, lab.save_state, lab.config.name, _osds_of(lab, args), args.cores)
    elif args.knob == "media":
        link = osd_devices.ROLE_LINKS[args.device]
        targets = {osd: bootstrap.osd_data(lab.dir, osd) / link for osd in _osds_of(lab, args)}
        made = knobs.saturate_media(
            lab.state, lab.save_state, lab.config.name, targets, args.iops, args.mbps, role=args.device
        )
    else:
        made = [
            knobs.saturate_network(
                lab.state, lab.save_state, lab.topo, args.host, args.rate, args.network, lab.dir / "log"
            )
        ]
    for knob in made:
        print(f"lab: {knob['kind']} knob on {knob['target']}: {knobs.describe(knob)}")
    return 0


def env_line(directory: Path) -> str:
    """The shell line that points the Ceph tools at the lab: with a release run from a rootfs, the lab's
    wrappers of that release's tools come first in PATH."""
    line = f"export CEPH_CONF={shlex.quote(str(directory / 'ceph.conf'))}"
    wrappers = mountns.bin_dir(directory)
    if wrappers.is_dir():
        line += f' PATH={shlex.quote(str(wrappers))}:"$PATH"'
    return line
