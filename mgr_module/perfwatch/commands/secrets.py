"""The commands that take secrets with `-i FILE`: the endpoint's certificate, key, client CA and basic auth
users, and the rgw probe's S3 keys. What they do with the mgr store is in secret_store.py."""

from typing import Any, Optional, Tuple

from mgr_module import HandleCommandResult

from ..ceph import mgr_compat
from ..endpoint.tls_auth import CRT, KEY
from . import secret_store
from .host import CommandHost


class SecretsCommands(CommandHost):
    def _store(self) -> Tuple[Any, Any]:
        return self.get_store, self.set_store

    def _answer(self, answer: secret_store.Answer) -> HandleCommandResult:
        if answer[0] == 0:
            self.secrets_changed()
        return HandleCommandResult(*answer)

    @mgr_compat.write_command("perfwatch set-ssl-certificate")
    def cmd_set_ssl_certificate(self, mgr_id: Optional[str] = None, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Store the metrics endpoint's TLS certificate (PEM, -i FILE), for every mgr or for one"""
        return self._answer(secret_store.set_pem(self._store()[1], CRT, mgr_id, inbuf))

    @mgr_compat.write_command("perfwatch set-ssl-certificate-key")
    def cmd_set_ssl_certificate_key(
        self, mgr_id: Optional[str] = None, inbuf: Optional[str] = None
    ) -> HandleCommandResult:
        """Store the private key of that certificate (PEM, -i FILE), for every mgr or for one"""
        return self._answer(secret_store.set_pem(self._store()[1], KEY, mgr_id, inbuf))

    @mgr_compat.write_command("perfwatch set-ssl-client-ca")
    def cmd_set_ssl_client_ca(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Ask clients for a certificate signed by this CA (PEM, -i FILE)"""
        return self._answer(secret_store.set_client_ca(self._store()[1], inbuf))

    @mgr_compat.write_command("perfwatch clear-ssl-client-ca")
    def cmd_clear_ssl_client_ca(self) -> HandleCommandResult:
        """Stop asking clients for a certificate"""
        return self._answer(secret_store.clear_client_ca(self._store()[1]))

    @mgr_compat.write_command("perfwatch set-basic-auth")
    def cmd_set_basic_auth(self, username: str, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Ask for this user's password (given in a file: -i FILE) on the metrics endpoint"""
        get, put = self._store()
        return self._answer(secret_store.set_basic_auth(get, put, username, inbuf))

    @mgr_compat.write_command("perfwatch clear-basic-auth")
    def cmd_clear_basic_auth(self, username: Optional[str] = None) -> HandleCommandResult:
        """Remove a basic auth user, or all of them"""
        get, put = self._store()
        return self._answer(secret_store.clear_basic_auth(get, put, username))

    @mgr_compat.write_command("perfwatch set-s3-credentials")
    def cmd_set_s3_credentials(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Store the rgw probe's S3 keys from a file (-i FILE: radosgw-admin user info, or two lines)"""
        return self._answer(secret_store.set_s3_credentials(self._store()[1], inbuf))

    @mgr_compat.write_command("perfwatch clear-s3-credentials")
    def cmd_clear_s3_credentials(self) -> HandleCommandResult:
        """Remove the stored S3 keys"""
        return self._answer(secret_store.clear_s3_credentials(self._store()[1]))
