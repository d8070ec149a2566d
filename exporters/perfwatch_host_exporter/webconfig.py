"""--web.config.file: TLS and basic auth in exporter-toolkit's format, the one node_exporter and every
Prometheus exporter read, so one file (and cephadm's secure monitoring stack) serves them all.

Unknown keys are refused, as exporter-toolkit refuses them; so are cipher_suites and curve_preferences (Go's
names, which Python's ssl cannot honour exactly) and http_server_config's headers (its http2 is accepted, to
no effect). The file and the files it names are read again when one changes (at most once a second), so
certificates rotated in place are served without a restart; a change that does not load keeps the settings
that did, and the log says why. The format: exporters/README.md#tls-and-basic-auth---webconfigfile.
"""

import logging
import os
import ssl
import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from perfwatch.common.server.basic_auth import BasicAuth
from perfwatch.common.server.passwords import PasswordError
from perfwatch.common.server.security import FixedSecurity, Security
from perfwatch.common.server.tls import (
    NO_CLIENT_CERT,
    REQUIRE_AND_VERIFY,
    VERIFY_IF_GIVEN,
    VERSIONS,
    TlsError,
    TlsSettings,
    server_context,
)

from . import yamlish
from .fsroot import read_regular

READ_LIMIT = 1 << 20
_TOP = ("tls_server_config", "http_server_config", "basic_auth_users")
_TLS_KEYS = (
    "cert_file",
    "key_file",
    "client_auth_type",
    "client_ca_file",
    "client_allowed_sans",
    "min_version",
    "max_version",
    "prefer_server_cipher_suites",
    "cipher_suites",
    "curve_preferences",
)
_REFUSED = {
    "cipher_suites": "Go's cipher suite names; Python's ssl keeps OpenSSL's defaults (restrict with min_version)",
    "curve_preferences": "Go's curve names; Python's ssl keeps OpenSSL's defaults",
    "headers": "extra response headers are not supported",
}


class WebConfigError(ValueError):
    pass


class WebConfig(NamedTuple):
    tls: Optional[TlsSettings]
    allowed_sans: Tuple[str, ...]
    users: Dict[str, str]
    files: Tuple[str, ...]  # the config and the files it names: a change to one reloads


def parse(text: str, path: str) -> WebConfig:
    """The settings of a web config file's text (`path` is where it is: relative paths start there).
    Raises WebConfigError naming what is wrong."""
    try:
        doc = yamlish.loads(text)
    except (ValueError, RecursionError) as exc:
        raise WebConfigError(str(exc)) from None
    doc = {} if doc is None else doc
    _mapping(doc, "the file", _TOP)
    folder = os.path.dirname(os.path.abspath(path))
    files = [os.path.abspath(path)]
    tls: Optional[TlsSettings] = None
    sans: Tuple[str, ...] = ()
    tls_doc = doc.get("tls_server_config")
    if tls_doc:
        _mapping(tls_doc, "tls_server_config", _TLS_KEYS)
        for key in tls_doc:
            if key in _REFUSED:
                raise WebConfigError("tls_server_config.{}: not supported: {}".format(key, _REFUSED[key]))
        for key in ("cert_file", "key_file"):
            if not isinstance(tls_doc.get(key), str) or not tls_doc[key]:
                raise WebConfigError("tls_server_config.{} is required (a file name)".format(key))
        names = {key: os.path.join(folder, tls_doc[key]) for key in ("cert_file", "key_file", "client_ca_file")
                 if isinstance(tls_doc.get(key), str) and tls_doc[key]}  # fmt: skip
        files.extend(names.values())
        sans = tuple(_strings(tls_doc.get("client_allowed_sans") or [], "tls_server_config.client_allowed_sans"))
        tls = TlsSettings(
            cert_file=names["cert_file"],
            key_file=names["key_file"],
            client_ca_file=names.get("client_ca_file"),
            client_auth=_text(tls_doc, "client_auth_type", "NoClientCert"),
            min_version=_text(tls_doc, "min_version", "TLS12"),
            max_version=_text(tls_doc, "max_version", "TLS13"),
            prefer_server_cipher_suites=_flag(tls_doc, "prefer_server_cipher_suites", True),
        )
    http_doc = doc.get("http_server_config")
    if http_doc:
        _mapping(http_doc, "http_server_config", ("http2", "headers"))
        if "headers" in http_doc:
            raise WebConfigError("http_server_config.headers: not supported: " + _REFUSED["headers"])
        _flag(http_doc, "http2", True)
    users = doc.get("basic_auth_users") or {}
    _mapping(users, "basic_auth_users", None)
    for name, stored in users.items():
        if not isinstance(stored, str):
            raise WebConfigError("basic_auth_users.{}: a password hash (a string) is needed".format(name))
    return WebConfig(tls, sans, dict(users), tuple(files))


def _mapping(value: Any, where: str, keys: Optional[Tuple[str, ...]]) -> None:
    if not isinstance(value, dict):
        raise WebConfigError("{}: a mapping of keys is needed".format(where))
    if keys is not None:
        unknown = sorted(set(value) - set(keys))
        if unknown:
            raise WebConfigError("{}: unknown key(s) {}".format(where, ", ".join(unknown)))


def _text(doc: Dict[str, Any], key: str, default: str) -> str:
    value = doc.get(key, default)
    if not isinstance(value, str):
        raise WebConfigError("tls_server_config.{}: a string is needed".format(key))
    return value


def _flag(doc: Dict[str, Any], key: str, default: bool) -> bool:
    value = doc.get(key, default)
    if not isinstance(value, bool):
        raise WebConfigError("{}: true or false is needed".format(key))
    return value


def _strings(value: Any, where: str) -> List[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise WebConfigError("{}: a list of names is needed".format(where))
    return list(value)


def read(path: str) -> WebConfig:
    """Read and parse the file (a regular file, symlinks followed as Kubernetes mounts secrets, at most
    READ_LIMIT bytes: a FIFO would block the exporter's start)."""
    try:
        raw = read_regular(path, READ_LIMIT)
    except OSError as exc:
        raise WebConfigError("{}: {}".format(path, exc.strerror or exc)) from None
    try:
        return parse(raw.decode("utf-8"), path)
    except UnicodeDecodeError:
        raise WebConfigError("{}: not UTF-8 text".format(path)) from None


class Loaded(NamedTuple):
    config: WebConfig
    tls: Optional[ssl.SSLContext]
    auth: Optional[BasicAuth]


def load(path: str) -> Loaded:
    """The file read and everything it names loaded. Raises WebConfigError."""
    config = read(path)
    try:
        tls = server_context(config.tls) if config.tls is not None else None
    except TlsError as exc:
        raise WebConfigError("{}: tls_server_config: {}".format(path, exc)) from None
    try:
        auth = BasicAuth(config.users) if config.users else None
    except PasswordError as exc:
        raise WebConfigError("{}: basic_auth_users: {}".format(path, exc)) from None
    return Loaded(config, tls, auth)


def _stamps(files: Tuple[str, ...]) -> Tuple[Tuple[float, int, int], ...]:
    stamps = []
    for name in files:
        try:
            st = os.stat(name)
            stamps.append((st.st_mtime, st.st_size, st.st_ino))
        except OSError:
            stamps.append((0.0, -1, 0))
    return tuple(stamps)


class WebConfigSecurity(Security):
    """The Security of a --web.config.file, reloaded when it or a file it names changes.

    A change is taken only once two looks a second apart see the same files (a half-written file is
    not loaded), only if it loads, and never if it turns TLS or basic auth off (an emptied or truncated
    file would otherwise serve plain HTTP to everyone): that takes a restart. What is refused is logged
    as an error and the settings in force stay."""

    def __init__(self, path: str, log: logging.Logger, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.log = log
        self.clock = clock
        self._current = load(path)  # the first load's error stops the exporter at start
        self._stamps = _stamps(self._current.config.files)
        self._pending: Optional[Tuple[Tuple[float, int, int], ...]] = None  # seen changed once, not yet taken
        self._checked = clock()
        self._failed: Optional[str] = None
        self._lock = threading.Lock()

    def _fresh(self) -> Loaded:
        with self._lock:
            now = self.clock()
            if now - self._checked >= 1.0:
                self._checked = now
                stamps = _stamps(self._current.config.files)
                if stamps == self._stamps:
                    self._pending = None
                elif stamps != self._pending:
                    self._pending = stamps  # changed: taken if it looks the same at the next look
                else:
                    self._pending = None
                    self._stamps = stamps  # tried once per change, whatever comes of it
                    self._reload()
            return self._current

    def _reload(self) -> None:
        try:
            loaded = load(self.path)
            problem = _downgrade(self._current, loaded)
        except WebConfigError as exc:
            problem = "does not load: {}".format(exc)
        except Exception as exc:  # a bug must not take the server down: the settings in force stay
            problem = "does not load: {}: {}".format(type(exc).__name__, exc)
        if problem is not None:
            if problem != self._failed:
                self.log.error("web config %s changed but %s; still serving the settings in force", self.path, problem)
            self._failed = problem
            return
        self._current, self._failed = loaded, None
        self.log.info("web config %s reloaded: %s", self.path, FixedSecurity(loaded.tls, loaded.auth).describe())

    def tls(self) -> Optional[ssl.SSLContext]:
        return self._fresh().tls

    def auth(self) -> Optional[BasicAuth]:
        return self._fresh().auth

    def allowed_client_names(self) -> Tuple[str, ...]:
        return self._fresh().config.allowed_sans


def _downgrade(current: Loaded, new: Loaded) -> Optional[str]:
    """Why `new` may not replace `current` while running: it asks less of clients (TLS or basic auth
    off, a weaker client certificate policy, more or no names allowed, an older TLS version)."""
    if current.tls is not None and new.tls is None:
        return "would turn TLS off (restart the exporter for that)"
    if current.auth is not None and new.auth is None:
        return "would turn basic auth off (restart the exporter for that)"
    old_tls, new_tls = current.config.tls, new.config.tls
    if old_tls is not None and new_tls is not None:
        if _POLICY_STRENGTH[new_tls.client_auth] < _POLICY_STRENGTH[old_tls.client_auth]:
            return "would ask less of client certificates ({} after {}; restart the exporter for that)".format(
                new_tls.client_auth, old_tls.client_auth
            )
        old_names, new_names = set(current.config.allowed_sans), set(new.config.allowed_sans)
        if old_names and not (new_names and new_names <= old_names):
            return "would allow more client names (restart the exporter for that)"
        if VERSIONS.index(new_tls.min_version) < VERSIONS.index(old_tls.min_version):
            return "would allow an older TLS version ({}; restart the exporter for that)".format(new_tls.min_version)
    return None


# how much each client_auth_type asks: a reload may keep or raise it, never lower it
_POLICY_STRENGTH = {NO_CLIENT_CERT: 0, VERIFY_IF_GIVEN: 1, REQUIRE_AND_VERIFY: 2}
