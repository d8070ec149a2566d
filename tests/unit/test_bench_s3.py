"""The stdlib SigV4 signer against botocore's, for the same request, keys and time."""

import datetime
import hashlib

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from perfwatch import options, status
from perfwatch.benchmarks.s3 import EMPTY_SHA256, listed_keys, sign

NOW = datetime.datetime(2026, 11, 21, 18, 30, 5, tzinfo=datetime.UTC)
ACCESS, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


def botocore_authorization(method: str, url: str, body: bytes, monkeypatch: pytest.MonkeyPatch) -> str:
    import botocore.auth

    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: NOW.replace(tzinfo=None))
    req = AWSRequest(method=method, url=url, data=body)
    S3SigV4Auth(Credentials(ACCESS, SECRET), "s3", "us-east-1").add_auth(req)
    return req.headers["Authorization"]


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("PUT", "http://127.0.0.1:7480/perfwatch-probe", b""),
        ("PUT", "http://127.0.0.1:7480/perfwatch-probe/rgw-20261121T183005-ab12", b"x" * 4096),
        ("GET", "http://198.18.1.1:17480/perfwatch-probe?list-type=2&prefix=rgw-", b""),
        ("DELETE", "http://127.0.0.1:7480/b/key%20with%20space", b""),
    ],
)
def test_signature_matches_botocore(method: str, url: str, body: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = hashlib.sha256(body).hexdigest()
    ours = sign(method, url, {}, payload, ACCESS, SECRET, "us-east-1", NOW)["Authorization"]
    assert ours == botocore_authorization(method, url, body, monkeypatch)


def test_the_secret_is_not_in_the_signed_headers() -> None:
    headers = sign("GET", "http://h:1/b", {}, EMPTY_SHA256, ACCESS, SECRET, "us-east-1", NOW)
    assert SECRET not in " ".join(headers.values())


def test_listed_keys() -> None:
    body = (
        b'<?xml version="1.0"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        b"<Contents><Key>rgw-1</Key></Contents><Contents><Key>rgw-2</Key></Contents></ListBucketResult>"
    )
    assert listed_keys(body) == ["rgw-1", "rgw-2"]


def test_secrets_are_redacted_in_status() -> None:
    values = dict(options.defaults(), rgw_s3_access_key="AK", rgw_s3_secret_key=SECRET)
    shown = options.redacted(values)
    assert shown["rgw_s3_secret_key"] == "<set>" and shown["rgw_s3_access_key"] == "<set>"
    assert options.redacted(options.defaults())["rgw_s3_secret_key"] == "<not set>"
    report = status.build("0", "x", True, "v", shown, 0.0, 0, None, now=1.0)
    assert SECRET not in status.render_plain(report)
