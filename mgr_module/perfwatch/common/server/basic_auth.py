"""HTTP basic authentication for the endpoints: users with password hashes (passwords.py), and the answer
to one request's Authorization header. A password that checked out is remembered (a keyed digest, never
the password) so that a scrape every few seconds does not pay for bcrypt each time; an unknown user costs
as much as a known one, so timing does not tell which users exist.

Checking a password is slow on purpose, so guesses must not be able to crowd out the scrapes: one check
runs at a time (a remembered password needs none), and a client address that failed FAILURES times in
THROTTLE_SECONDS is not checked for THROTTLE_SECONDS after its last failure. Both are refused with
AUTH_THROTTLED (429, Retry-After) at no cost."""

import base64
import binascii
import hashlib
import hmac
import os
import threading
import time
from typing import Dict, List, Mapping, Optional, Set, Tuple

from . import passwords

# Why a request was refused: the reason label of the endpoints' http_refused_total
AUTH_MISSING = "auth_missing"  # no (or not a Basic) Authorization header
AUTH_FAILED = "auth_failed"  # an unknown user, a wrong password or a header that does not decode
AUTH_THROTTLED = "auth_throttled"  # not checked: another check runs, or the client failed too often
FAILURES = 5
THROTTLE_SECONDS = 10.0
_PEERS = 4096  # client addresses whose failures are remembered

REALM = "ceph-perfwatch"
_REMEMBERED = 64  # correct (user, password) pairs kept; a new one beyond forgets them all


class BasicAuth:
    def __init__(self, users: Mapping[str, str]) -> None:
        """users: {name: hash}; every hash must pass passwords.check_hash (PasswordError otherwise)."""
        if not users:
            raise passwords.PasswordError("basic auth needs at least one user")
        for name, stored in users.items():
            if not name or ":" in name or not name.isprintable():
                raise passwords.PasswordError("user name {!r}: must be non-empty, printable, without ':'".format(name))
            try:
                passwords.check_hash(stored)
            except passwords.PasswordError as exc:
                raise passwords.PasswordError("user {!r}: {}".format(name, exc)) from None
        self.users: Dict[str, str] = dict(users)
        # checked for an unknown user, so that it takes as long as a known one: a hash of the kind and
        # cost of the most costly user's, of a password nobody knows
        self._decoy = _decoy_like(max(self.users.values(), key=passwords.cost))
        self._key = os.urandom(32)
        self._good: Set[bytes] = set()
        self._lock = threading.Lock()
        self._checking = threading.Lock()  # one slow check at a time
        self._failures: Dict[str, List[float]] = {}  # insertion-ordered: the first failed longest ago

    def refusal(self, header: Optional[str], peer: str = "", now: Optional[float] = None) -> Optional[str]:
        """None when the Authorization header names a user and their password; else AUTH_MISSING,
        AUTH_FAILED or AUTH_THROTTLED. `peer` is the client's address (its failures are counted)."""
        credentials = _decode(header)
        if credentials is None:
            return AUTH_MISSING if not header or not header.strip().lower().startswith("basic") else AUTH_FAILED
        user, password = credentials
        token = hmac.new(self._key, user.encode("utf-8") + b"\0" + password.encode("utf-8"), hashlib.sha256).digest()
        now = time.monotonic() if now is None else now
        with self._lock:
            if token in self._good:
                return None
            if self._throttled(peer, now):
                return AUTH_THROTTLED
        if not self._checking.acquire(blocking=False):
            return AUTH_THROTTLED
        try:
            stored = self.users.get(user)
            ok = passwords.verify(password, stored if stored is not None else self._decoy) and stored is not None
        finally:
            self._checking.release()
        with self._lock:
            if not ok:
                self._failed(peer, now)
                return AUTH_FAILED
            if len(self._good) >= _REMEMBERED:
                self._good.clear()
            self._good.add(token)
        return None

    def _throttled(self, peer: str, now: float) -> bool:
        recent = [t for t in self._failures.get(peer, []) if now - t < THROTTLE_SECONDS]
        return len(recent) >= FAILURES

    def _failed(self, peer: str, now: float) -> None:
        recent = [t for t in self._failures.pop(peer, []) if now - t < THROTTLE_SECONDS][-(FAILURES - 1) :]
        self._failures[peer] = [*recent, now]
        while len(self._failures) > _PEERS:
            del self._failures[next(iter(self._failures))]


def _decode(header: Optional[str]) -> Optional[Tuple[str, str]]:
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "basic" or not value.strip():
        return None
    try:
        text = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    user, sep, password = text.partition(":")
    return (user, password) if sep else None


def _decoy_like(stored: str) -> str:
    if stored.startswith(passwords.PBKDF2_PREFIX):
        iterations = int(stored[len(passwords.PBKDF2_PREFIX) :].split("$")[0])
        return passwords.hash_pbkdf2(os.urandom(16).hex(), iterations)
    return stored  # bcrypt: checking against a real user's hash costs the same; the password will not match


def challenge() -> Dict[str, str]:
    """The header a 401 carries."""
    return {"WWW-Authenticate": 'Basic realm="{}", charset="UTF-8"'.format(REALM)}


def status_of(reason: str) -> Tuple[int, Dict[str, str]]:
    """The status and headers of a refusal: 429 to come back later, else 401 with the challenge."""
    if reason == AUTH_THROTTLED:
        return 429, {"Retry-After": str(int(THROTTLE_SECONDS))}
    return 401, challenge()
