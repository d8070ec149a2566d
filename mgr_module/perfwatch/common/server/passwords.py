"""Password hashes the endpoints accept for basic auth, and how to check a password against one.

- bcrypt (`$2a$`, `$2b$`, `$2y$`): what exporter-toolkit's web config holds (`htpasswd -nBC 10 user`,
  Python's bcrypt.hashpw). Checked with the bcrypt package (Debian's python3-bcrypt, which ceph-mgr's
  dashboard depends on) or, without it, with the C library's crypt() (libxcrypt: Debian 11+, EL 8+),
  after that has shown it computes a known bcrypt hash right. Neither: BACKEND_MISSING, said at start.
- PBKDF2-SHA256 (`$pbkdf2-sha256$<iterations>$<salt>$<hash>`, base64): what
  `ceph perfwatch set-basic-auth` stores; the standard library makes it wherever ceph-mgr runs.
"""

import base64
import hashlib
import hmac
import os
import threading
from typing import Callable, Optional

BCRYPT_PREFIXES = ("$2a$", "$2b$", "$2y$")
PBKDF2_PREFIX = "$pbkdf2-sha256$"
PBKDF2_ITERATIONS = 200000  # about 0.1 s here: a guess costs as much; a correct password is cached
# The costs a hash may have: each check of a wrong password runs at this cost, so a higher one would let
# guesses eat a core (bcrypt 12 is 4 times 10; htpasswd -B makes 5 by default, exporter-toolkit's docs 10)
MAX_BCRYPT_COST = 12
MAX_PBKDF2_ITERATIONS = 1000000
BACKEND_MISSING = (
    "bcrypt password hashes need the bcrypt Python package (Debian/Ubuntu: python3-bcrypt; EL: python3-bcrypt) "
    "or a C library whose crypt() knows bcrypt (libxcrypt)"
)
# bcrypt("perfwatch") at cost 4: the C library's crypt() is trusted only once it gives this
_KNOWN_PASSWORD = b"perfwatch"
_KNOWN_HASH = b"$2b$04$J9FW0Y1Tdjp0YkHUMI1FZu.2lRzxDXZhCD3ZEixi.MR3BVYtft7ju"

BcryptFn = Callable[[bytes, bytes], Optional[bytes]]  # (password, hash) -> the hash computed, None on error


class PasswordError(ValueError):
    pass


def _from_package() -> Optional[BcryptFn]:
    try:
        import bcrypt  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None

    def compute(password: bytes, stored: bytes) -> Optional[bytes]:
        try:
            return bytes(bcrypt.hashpw(password, stored))
        except ValueError:
            return None

    return compute


def _from_libcrypt() -> Optional[BcryptFn]:
    # ctypes only here, when bcrypt is asked for: importing it makes a W+X mapping on old Pythons, which
    # MemoryDenyWriteExecute= refuses
    try:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("crypt")
        crypt = ctypes.CDLL(name).crypt if name else None
    except (ImportError, OSError, AttributeError, MemoryError):
        return None
    if crypt is None:
        return None
    crypt.restype = ctypes.c_char_p
    crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    lock = threading.Lock()  # crypt() returns a static buffer

    def compute(password: bytes, stored: bytes) -> Optional[bytes]:
        if b"\0" in password:
            return None
        with lock:
            out = crypt(password, stored)
        return bytes(out) if out else None

    return compute


_backend: Optional[BcryptFn] = None
_looked = False
_backend_lock = threading.Lock()


def bcrypt_backend() -> Optional[BcryptFn]:
    """The first way to compute bcrypt that gives the known hash; None when there is none."""
    global _backend, _looked
    with _backend_lock:
        if not _looked:
            for make in (_from_package, _from_libcrypt):
                compute = make()
                if compute is not None and compute(_KNOWN_PASSWORD, _KNOWN_HASH) == _KNOWN_HASH:
                    _backend = compute
                    break
            _looked = True
        return _backend


def cost(stored: str) -> float:
    """About how long checking a password against `stored` takes, in cost-10-bcrypt units (ordering only)."""
    if stored.startswith(BCRYPT_PREFIXES):
        parts = stored.split("$")
        return float(2 ** (int(parts[2]) - 10)) if len(parts) > 2 and parts[2].isdigit() else 0.0
    if stored.startswith(PBKDF2_PREFIX):
        head = stored[len(PBKDF2_PREFIX) :].split("$")[0]
        return int(head) / 300000 if head.isdigit() else 0.0  # about 300,000 iterations per bcrypt-10 here
    return 0.0


def check_hash(stored: str) -> None:
    """Raises PasswordError when `stored` is not a hash this module can check (here and now)."""
    if stored.startswith(BCRYPT_PREFIXES):
        parts = stored.split("$")
        if len(parts) != 4 or not parts[2].isdigit() or len(parts[3]) != 53:
            raise PasswordError("not a bcrypt hash: it must look like $2y$10$ followed by 53 characters")
        if int(parts[2]) > MAX_BCRYPT_COST:
            raise PasswordError(
                "bcrypt cost {} is above {}: each wrong guess would cost {} times a cost-10 check; "
                "make the hash with htpasswd -nBC 10".format(int(parts[2]), MAX_BCRYPT_COST, 2 ** (int(parts[2]) - 10))
            )
        if bcrypt_backend() is None:
            raise PasswordError(BACKEND_MISSING)
        return
    if stored.startswith(PBKDF2_PREFIX):
        _pbkdf2_fields(stored)
        return
    raise PasswordError("not a password hash this endpoint knows: bcrypt ($2y$...) or $pbkdf2-sha256$")


def _pbkdf2_fields(stored: str) -> tuple:  # type: ignore[type-arg]
    parts = stored[len(PBKDF2_PREFIX) :].split("$")
    try:
        iterations, salt, digest = int(parts[0]), _b64decode(parts[1]), _b64decode(parts[2])
    except (IndexError, ValueError):
        raise PasswordError("not a $pbkdf2-sha256$<iterations>$<salt>$<hash> hash") from None
    if len(parts) != 3 or iterations < 1 or not salt or len(digest) != 32:
        raise PasswordError("not a $pbkdf2-sha256$<iterations>$<salt>$<hash> hash")
    if iterations > MAX_PBKDF2_ITERATIONS:
        raise PasswordError("{} PBKDF2 iterations is above {}".format(iterations, MAX_PBKDF2_ITERATIONS))
    return iterations, salt, digest


def _b64decode(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"./", validate=True)


def _b64encode(raw: bytes) -> str:
    return base64.b64encode(raw, altchars=b"./").decode("ascii").rstrip("=")


def hash_pbkdf2(password: str, iterations: int = PBKDF2_ITERATIONS, salt: Optional[bytes] = None) -> str:
    salt = salt if salt is not None else os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return "{}{}${}${}".format(PBKDF2_PREFIX, iterations, _b64encode(salt), _b64encode(digest))


def verify(password: str, stored: str) -> bool:
    """True when `password` matches `stored` (a hash check_hash accepts); False otherwise, and for a
    hash it cannot check."""
    raw = password.encode("utf-8")
    if stored.startswith(BCRYPT_PREFIXES):
        compute = bcrypt_backend()
        expected = stored.encode("ascii", "replace")
        computed = compute(raw, expected) if compute is not None else None
        return computed is not None and hmac.compare_digest(computed, expected)
    if stored.startswith(PBKDF2_PREFIX):
        try:
            iterations, salt, digest = _pbkdf2_fields(stored)
        except PasswordError:
            return False
        return hmac.compare_digest(hashlib.pbkdf2_hmac("sha256", raw, salt, iterations), digest)
    return False
