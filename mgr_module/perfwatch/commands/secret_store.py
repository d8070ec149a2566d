"""What the commands that take secrets with `-i FILE` do: the endpoint's certificate, key, client CA and
basic auth users (endpoint/tls_auth.py reads them), and the rgw probe's S3 keys. A file keeps a secret out
of shell history and out of `ceph config log`, where an option value stays. Pure: the mgr store is two
functions; each answer is (return code, stdout, stderr), and none ever repeats a secret."""

import errno
import json
import re
from typing import Callable, Dict, Optional, Tuple

from ..common.server.passwords import hash_pbkdf2
from ..endpoint.tls_auth import CLIENT_CA, CRT, USERS, check_pem, parse_users

Get = Callable[[str], Optional[str]]
Set = Callable[[str, Optional[str]], None]  # None removes the key
Answer = Tuple[int, str, str]

S3_CREDENTIALS = "rgw_s3_credentials"  # JSON {"access_key", "secret_key"} in the mgr store
APPLIES = "The endpoint takes it at its next pass (up to collect_interval); `ceph perfwatch status` shows it."
_USER = re.compile(r"[A-Za-z0-9_.@-]{1,64}")  # fullmatch: "$" would let a trailing newline in
_MGR_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _file(inbuf: Optional[str], what: str) -> Tuple[Optional[str], Optional[Answer]]:
    """The input file's text with its last newline dropped, or the answer that says it is missing."""
    text = (inbuf or "").rstrip("\r\n")
    if not text.strip():
        return None, (-errno.EINVAL, "", "give {} in a file: -i FILE (it was empty or missing)".format(what))
    return text, None


def set_pem(store_set: Set, which: str, mgr_id: Optional[str], inbuf: Optional[str]) -> Answer:
    """Store the certificate (which=CRT) or key (KEY), for every mgr or for mgr_id."""
    what = "certificate" if which == CRT else "private key"
    text, missing = _file(inbuf, "the PEM " + what)
    if missing is not None:
        return missing
    assert text is not None
    if mgr_id is not None and not _MGR_ID.fullmatch(mgr_id):
        return -errno.EINVAL, "", "not a mgr id: {!r}".format(mgr_id)
    if mgr_id is not None and mgr_id.startswith("mgr."):
        # a mgr reads mgr/perfwatch/<its id>/..., and its id has no "mgr.": stored so, no mgr would ever use it
        return (
            -errno.EINVAL,
            "",
            "give the mgr's id without 'mgr.' (as `ceph mgr stat` shows it): {}".format(mgr_id[len("mgr.") :]),
        )
    problem = check_pem(text, what)
    if problem is not None:
        return -errno.EINVAL, "", problem
    key = "{}/{}".format(mgr_id, which) if mgr_id else which
    store_set(key, text + "\n")
    where = "mgr.{}".format(mgr_id) if mgr_id else "every mgr without one of its own"
    return 0, "", "{} stored for {} (mgr/perfwatch/{}). {}".format(what.capitalize(), where, key, APPLIES)


def set_client_ca(store_set: Set, inbuf: Optional[str]) -> Answer:
    text, missing = _file(inbuf, "the PEM CA certificate")
    if missing is not None:
        return missing
    assert text is not None
    problem = check_pem(text, "CA certificate")
    if problem is not None:
        return -errno.EINVAL, "", problem
    store_set(CLIENT_CA, text + "\n")
    return 0, "", "Client CA stored: clients must present a certificate it signed (with ssl on). " + APPLIES


def clear_client_ca(store_set: Set) -> Answer:
    store_set(CLIENT_CA, None)
    return 0, "", "Client CA removed: no client certificate is asked for. " + APPLIES


def _users(store_get: Get) -> Tuple[Dict[str, str], Optional[Answer]]:
    try:
        return parse_users(store_get(USERS)), None
    except Exception as exc:  # whatever someone put there with config-key set
        return {}, (-errno.EIO, "", "mgr/perfwatch/{} cannot be read ({}): clear-basic-auth".format(USERS, exc))


def set_basic_auth(store_get: Get, store_set: Set, username: str, inbuf: Optional[str]) -> Answer:
    """Add or replace a user; the file holds the password (its hash is stored, never the password)."""
    if not _USER.fullmatch(username):
        return -errno.EINVAL, "", "user name: 1-64 letters, digits and . _ @ - (got {!r})".format(username)
    password, missing = _file(inbuf, "the password")
    if missing is not None:
        return missing
    assert password is not None
    if len(password) < 8:
        return -errno.EINVAL, "", "the password is shorter than 8 characters"
    users, broken = _users(store_get)
    if broken is not None:
        return broken
    replaced = username in users
    users[username] = hash_pbkdf2(password)
    store_set(USERS, json.dumps(users, sort_keys=True))
    done = "replaced" if replaced else "added"
    return 0, "", "Basic auth user {} {} ({} user(s)). {}".format(username, done, len(users), APPLIES)


def clear_basic_auth(store_get: Get, store_set: Set, username: Optional[str]) -> Answer:
    """Remove one user, or all (then no password is asked for)."""
    if username is None:
        store_set(USERS, None)
        return 0, "", "Basic auth off: every user removed. " + APPLIES
    users, broken = _users(store_get)
    if broken is not None:
        return broken
    if username not in users:
        return -errno.ENOENT, "", "no basic auth user {!r}".format(username)
    del users[username]
    store_set(USERS, json.dumps(users, sort_keys=True) if users else None)
    return 0, "", "Basic auth user {} removed ({} left). {}".format(username, len(users), APPLIES)


def parse_s3_credentials(text: str) -> Tuple[str, str]:
    """The access and secret key from {"access_key": .., "secret_key": ..}, from `radosgw-admin user info`
    (the first of its "keys"), or from two lines (access key, then secret key). Raises ValueError."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(stripped)
        except ValueError:
            raise ValueError("the file starts with '{' but is not JSON") from None
        if isinstance(doc, dict) and isinstance(doc.get("keys"), list) and doc["keys"]:
            doc = doc["keys"][0]
        if not isinstance(doc, dict):
            raise ValueError('JSON without "access_key" and "secret_key"')
        access, secret = doc.get("access_key"), doc.get("secret_key")
    else:
        lines = [line.strip() for line in stripped.splitlines() if line.strip()]
        if len(lines) != 2:
            raise ValueError("two lines (access key, secret key) or JSON with access_key and secret_key")
        access, secret = lines
    if not isinstance(access, str) or not isinstance(secret, str) or not access or not secret:
        raise ValueError('JSON without "access_key" and "secret_key"')
    for value in (access, secret):
        if any(ch.isspace() or ord(ch) < 32 for ch in value) or len(value) > 256:
            raise ValueError("a key holds spaces, control characters or more than 256 characters")
    return access, secret


def set_s3_credentials(store_set: Set, inbuf: Optional[str]) -> Answer:
    text, missing = _file(inbuf, "the S3 access and secret key")
    if missing is not None:
        return missing
    assert text is not None
    try:
        access, secret = parse_s3_credentials(text)
    except ValueError as exc:
        return -errno.EINVAL, "", "S3 credentials: {}".format(exc)
    store_set(S3_CREDENTIALS, json.dumps({"access_key": access, "secret_key": secret}))
    return 0, "", "S3 credentials stored; they take the place of rgw_s3_access_key and rgw_s3_secret_key."


def clear_s3_credentials(store_set: Set) -> Answer:
    store_set(S3_CREDENTIALS, None)
    return 0, "", "S3 credentials removed; rgw_s3_access_key and rgw_s3_secret_key apply (if set)."


def stored_s3_credentials(store_get: Get) -> Optional[Tuple[str, str]]:
    """The stored (access key, secret key), or None when none (or unreadable) are stored."""
    text = store_get(S3_CREDENTIALS)
    if not text:
        return None
    try:
        return parse_s3_credentials(text)
    except ValueError:
        return None
