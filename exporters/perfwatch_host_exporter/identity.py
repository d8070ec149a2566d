"""Which Ceph daemon a process is, from its comm and argv. Pure."""

import re
from typing import Dict, List, Match, NamedTuple, Optional

# A daemon's program name -> the kind of daemon. Matched against /proc/PID/comm (cut at 15 characters;
# these all fit) and the basename of the binary it runs (/proc/PID/exe): a daemon may rename its main
# thread, which renames the process's comm (Reef's and Tentacle's radosgw: "notif-worker0").
COMM_KINDS = {"ceph-osd": "osd", "ceph-mon": "mon", "ceph-mgr": "mgr", "ceph-mds": "mds", "radosgw": "rgw"}

# The options we read, each with the spellings Ceph accepts; all take a value.
_ALIASES = {
    "-i": "id",
    "--id": "id",
    "-n": "name",
    "--name": "name",
    "--cluster": "cluster",
    "--admin-socket": "admin_socket",
    "--osd-data": "osd_data",
    "-c": "conf",
    "--conf": "conf",
    "--fsid": "fsid",
}

_METAVAR = re.compile(r"\$(\{\w+\}|\w+)")


class Identity(NamedTuple):
    kind: str  # osd | mon | mgr | mds | rgw
    entity: str  # Ceph's entity name: osd.0, mon.a, client.rgw.foo
    label: str  # our ceph_daemon label: osd.0, mon.a, rgw.foo
    cluster: str
    admin_socket: Optional[str]  # --admin-socket from argv, metavariables expanded
    osd_data: Optional[str]  # --osd-data from argv, metavariables expanded
    conf: Optional[str]  # -c/--conf from argv (a list: comma or space separated), metavariables expanded
    fsid: Optional[str]  # --fsid from argv (Rook passes it), as written


def options(argv: List[str]) -> Dict[str, str]:
    """The value options we care about ("-i 3", "--id 3", "--id=3", "--admin_socket x"); the last wins."""
    found: Dict[str, str] = {}
    i = 1  # argv[0] is the program
    while i < len(argv):
        arg = argv[i]
        i += 1
        value: Optional[str] = None
        if arg.startswith("--"):
            if "=" in arg:
                arg, value = arg.split("=", 1)
            arg = "--" + arg[2:].replace("_", "-")  # Ceph treats - and _ in option names alike (not values)
        key = _ALIASES.get(arg)
        if key is None:
            continue
        if value is None:
            if i >= len(argv):
                break
            value = argv[i]
            i += 1
        found[key] = value
    return found


def expand(value: str, variables: Dict[str, str]) -> str:
    """Ceph's config metavariables ($cluster, ${name}, ...); unknown ones are left as they are."""

    def sub(match: Match[str]) -> str:
        name = match.group(1).strip("{}")
        return variables.get(name, match.group(0))

    return _METAVAR.sub(sub, value)


def rgw_label(entity: str) -> str:
    """client.rgw.foo -> rgw.foo; client.foo -> rgw.foo ("rgw." kept, or added once)."""
    base = entity[len("client.") :] if entity.startswith("client.") else entity
    return base if base.startswith("rgw.") else "rgw." + base


def identify(kind: str, argv: List[str], pid: int) -> Identity:
    """The daemon of `kind` (a value of COMM_KINDS) a process with this command line is."""
    opts = options(argv)
    entity_type = "client" if kind == "rgw" else kind
    if "name" in opts and "." in opts["name"]:
        entity = opts["name"]
    elif "name" in opts:  # "-n foo": Ceph would refuse it; take it as the id
        entity = "{}.{}".format(entity_type, opts["name"])
    else:
        entity = "{}.{}".format(entity_type, opts.get("id", "admin"))
    etype, _, ident = entity.partition(".")
    cluster = opts.get("cluster", "ceph")
    variables = {"cluster": cluster, "name": entity, "type": etype, "id": ident, "pid": str(pid)}
    asok = opts.get("admin_socket")
    osd_data = opts.get("osd_data")
    conf = opts.get("conf")
    return Identity(
        kind=kind,
        entity=entity,
        label=rgw_label(entity) if kind == "rgw" else entity,
        cluster=cluster,
        admin_socket=expand(asok, variables) if asok else None,
        osd_data=expand(osd_data, variables) if osd_data else None,
        conf=expand(conf, variables) if conf else None,
        fsid=opts.get("fsid"),
    )
