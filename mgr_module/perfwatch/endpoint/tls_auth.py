"""TLS and basic auth of the module's endpoint, kept in the mgr store the way Ceph's modules keep theirs:

- certificate and key: `ceph perfwatch set-ssl-certificate[-key] [<mgr_id>] -i <file.pem>` (config-keys
  mgr/perfwatch/crt and key, or per mgr mgr/perfwatch/<mgr_id>/crt and key, which win), served with `ssl` on;
- `set-ssl-client-ca -i ca.pem` (mgr/perfwatch/client_ca): clients must show a certificate it signed;
- `set-basic-auth <user> -i password-file` (mgr/perfwatch/basic_auth_users: PBKDF2 or bcrypt hashes).
Wanted is rebuilt when what is stored changes (a fingerprint): a new certificate restarts the endpoint at the
next pass. What cannot be served as asked (ssl on and no certificate, a key that does not match) is an
error: the endpoint then serves nothing rather than plain HTTP, and says why.
"""

import hashlib
import json
import os
import shutil
import ssl
import tempfile
from typing import Callable, Dict, NamedTuple, Optional

from ..common.server.basic_auth import BasicAuth
from ..common.server.passwords import PasswordError
from ..common.server.security import FixedSecurity, Security
from ..common.server.tls import REQUIRE_AND_VERIFY, TlsError, TlsSettings, server_context

CRT, KEY, CLIENT_CA, USERS = "crt", "key", "client_ca", "basic_auth_users"
SET_CERT = "ceph perfwatch set-ssl-certificate -i <cert.pem>"
SET_KEY = "ceph perfwatch set-ssl-certificate-key -i <key.pem>"

Lookup = Callable[[str], Optional[str]]  # a store key -> its value (None when unset)


class Wanted(NamedTuple):
    security: Security
    fingerprint: str  # of what it was built from
    error: Optional[str]  # why the endpoint cannot serve as configured; it then serves nothing


class Inputs(NamedTuple):
    ssl: bool
    crt: Optional[str]
    key: Optional[str]
    client_ca: Optional[str]
    users: Optional[str]

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(list(self)).encode("utf-8")).hexdigest()


def inputs(ssl_on: bool, localized: Lookup, shared: Lookup) -> Inputs:
    """What the endpoint's security is built from: certificate and key per mgr (localized) or shared."""
    return Inputs(ssl_on, localized(CRT), localized(KEY), shared(CLIENT_CA), shared(USERS))


def parse_users(text: Optional[str]) -> Dict[str, str]:
    """The stored users ({} when none). Raises ValueError for a store value that is not {name: hash}."""
    if not text:
        return {}
    try:
        users = json.loads(text)
    except RecursionError:  # "[[[[..." a hundred thousand deep
        raise ValueError("nested too deep") from None
    if not isinstance(users, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in users.items()):
        raise ValueError("not a JSON object of user names and password hashes")
    return users


def build(given: Inputs) -> Wanted:
    """What the endpoint is to serve with. Never raises: whatever goes wrong is an error that keeps it
    from serving (fail closed)."""
    try:
        return _build(given)
    except Exception as exc:  # a full temp dir, a surprise in a stored value: nothing, rather than plain
        return Wanted(Security(), given.fingerprint(), "TLS or auth settings: {}: {}".format(type(exc).__name__, exc))


def _build(given: Inputs) -> Wanted:
    fingerprint = given.fingerprint()
    try:
        users = parse_users(given.users)
        auth = BasicAuth(users) if users else None
    except (ValueError, PasswordError) as exc:
        return Wanted(Security(), fingerprint, "basic auth users in mgr/perfwatch/{}: {}".format(USERS, exc))
    if not given.ssl:
        return Wanted(FixedSecurity(auth=auth), fingerprint, None)
    missing = [command for value, command in ((given.crt, SET_CERT), (given.key, SET_KEY)) if not value]
    if missing:
        return Wanted(Security(), fingerprint, "ssl is on but no certificate or key is stored: " + "; ".join(missing))
    try:
        context = load_context(given.crt or "", given.key or "", given.client_ca)
    except TlsError as exc:
        return Wanted(Security(), fingerprint, "ssl: {}".format(exc))
    return Wanted(FixedSecurity(tls=context, auth=auth), fingerprint, None)


def load_context(crt: str, key: str, client_ca: Optional[str]) -> ssl.SSLContext:
    """The TLS context of PEM texts: written to a folder only this process can read (the ssl module
    loads certificates from files), loaded, and removed. Raises TlsError."""
    folder = tempfile.mkdtemp(prefix="perfwatch-tls-")  # mode 0700
    try:
        paths = {}
        for name, text in (("crt", crt), ("key", key), ("ca", client_ca)):
            if text:
                paths[name] = os.path.join(folder, name + ".pem")
                fd = os.open(paths[name], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(text.encode("utf-8"))  # whatever the locale: a PEM's preamble may not be ASCII
        settings = TlsSettings(paths["crt"], paths["key"])
        if "ca" in paths:
            settings = settings._replace(client_ca_file=paths["ca"], client_auth=REQUIRE_AND_VERIFY)
        try:
            return server_context(settings)
        except TlsError as exc:
            raise TlsError(str(exc).replace(folder + os.sep, "")) from None  # the stored key, not our temp path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def check_pem(text: str, what: str) -> Optional[str]:
    """Why `text` is not a PEM `what` ("certificate", "private key", "CA certificate"), or None."""
    if what == "private key":
        if "ENCRYPTED" in text or "Proc-Type: 4,ENCRYPTED" in text:
            return "an encrypted private key: the endpoint cannot ask for its passphrase; store it without one"
        return None if "PRIVATE KEY-----" in text else "not a PEM private key (-----BEGIN ... PRIVATE KEY-----)"
    if "-----BEGIN CERTIFICATE-----" not in text:
        return "not a PEM {} (-----BEGIN CERTIFICATE-----)".format(what)
    try:
        ssl.create_default_context(cadata=text)
    except (ssl.SSLError, ValueError) as exc:
        return "not a readable PEM {}: {}".format(what, exc)
    return None
