"""Whose processes are Ceph daemons: the users the exporter trusts. Parsers are pure; users() reads.

A process is taken for a daemon only when all its user ids (real, effective, saved, filesystem) are trusted:
root; the host's `ceph` user; the owner of each cluster directory /var/lib/ceph/<fsid> (cephadm's uid 167),
when /var/lib/ceph belongs to root or `ceph` and no one else may write there; each --daemon-user. Any other
user can start a process called ceph-osd with any command line: it is refused and counted, and nothing it
names is ever opened. More: exporters/README.md#trust-only-real-daemons.
"""

import re
import stat
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Sequence, Tuple, Union

from .fsroot import Root

CEPH_USER = "ceph"
CEPH_DIR = "/var/lib/ceph"
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

User = Union[int, str]  # a uid, or a user name to look up in the host's /etc/passwd


class Trusted(NamedTuple):
    uids: FrozenSet[int]
    why: Tuple[Tuple[int, str], ...]  # (uid, why it is trusted), for messages

    def allows(self, uids: Sequence[int]) -> bool:
        """Every id given is trusted (and there is at least one)."""
        return bool(uids) and all(uid in self.uids for uid in uids)

    def describe(self) -> str:
        return ", ".join("{} ({})".format(uid, why) for uid, why in self.why)


def parse_status_uids(text: str) -> Tuple[int, ...]:
    """The real, effective, saved and filesystem uids of /proc/PID/status ("Uid:\\t0\\t0\\t0\\t0")."""
    for line in text.splitlines():
        if line.startswith("Uid:"):
            try:
                return tuple(int(field) for field in line.split()[1:])
            except ValueError:
                break
    raise ValueError("no Uid line in /proc/PID/status")


def parse_passwd(text: str) -> Dict[str, int]:
    """/etc/passwd -> {user name: uid}; lines that are not name:x:uid:... are skipped."""
    users: Dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 3 and fields[0] and fields[2].isdigit():
            users.setdefault(fields[0], int(fields[2]))
    return users


def parse_user(text: str) -> User:
    """--daemon-user: a uid (digits) or a user name. Raises ValueError."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_.-]*\$?$", text):
        raise ValueError("not a user name or uid: {!r}".format(text))
    return text


def users(root: Root, extra: Iterable[User]) -> Tuple[Trusted, List[str]]:
    """The trusted users as this host shows them now, and what could not be resolved (an --daemon-user
    name the host does not have, an unreadable /etc/passwd)."""
    problems: List[str] = []
    why: Dict[int, str] = {0: "root"}
    try:
        passwd = parse_passwd(root.read_text(root.resolve("/etc/passwd")))
    except OSError as exc:
        problems.append("cannot read /etc/passwd: {}".format(exc))
        passwd = {}
    ceph_uid = passwd.get(CEPH_USER)
    if ceph_uid is not None:
        why.setdefault(ceph_uid, "the ceph user")
    named = {uid: name for name, uid in passwd.items()}
    for uid in _cluster_dir_owners(root, ceph_uid):
        if uid in named and named[uid] != CEPH_USER and uid not in why:
            # the host gave that uid to another user (a person, a service): its processes are not Ceph's
            problems.append(
                "uid {} owns a cluster directory in {} but is the host's user {}; not trusted (--daemon-user {} "
                "if it is)".format(uid, CEPH_DIR, named[uid], uid)
            )
            continue
        why.setdefault(uid, "owner of a cluster directory in " + CEPH_DIR)
    for user in extra:
        if isinstance(user, int):
            why.setdefault(user, "--daemon-user")
        elif user in passwd:
            why.setdefault(passwd[user], "--daemon-user " + user)
        else:
            problems.append("--daemon-user {}: no such user in /etc/passwd".format(user))
    ordered = tuple(sorted(why.items()))
    return Trusted(frozenset(why), ordered), problems


def _cluster_dir_owners(root: Root, ceph_uid: object) -> List[int]:
    """Owners of /var/lib/ceph/<fsid> directories, if /var/lib/ceph is root's or ceph's and writable by
    its owner only; [] otherwise (or when there is none)."""
    try:
        top = root.stat(CEPH_DIR)
        if top.uid not in (0, ceph_uid) or not stat.S_ISDIR(top.mode) or top.mode & 0o022:
            return []
        owners = []
        for entry in root.listdir(CEPH_DIR):
            if not _UUID.match(entry):
                continue
            st = root.stat(CEPH_DIR + "/" + entry)
            if stat.S_ISDIR(st.mode) and st.uid not in owners:
                owners.append(st.uid)
        return owners
    except OSError:
        return []
