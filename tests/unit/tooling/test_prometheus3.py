"""dev/tooling/prometheus3.py without the network: what a fetch refuses to replace, and when a cache is not used
(what would run from it runs as the caller). The fetch itself runs in `make deps`; the promtool tests use it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tooling import prometheus3


def fake_cache(cache: Path, version: str = "3.5.3") -> Path:
    """A cache as a fetch leaves it, with scripts that print `version` for prometheus and promtool."""
    binaries = prometheus3.bin_dir(cache)
    binaries.mkdir(parents=True)
    for name in prometheus3.PACKAGES:
        script = binaries / name
        script.write_text(f"#!/bin/sh\necho '{name}, version {version}+ds1 (branch: debian/sid)'\n")
        script.chmod(0o755)
    for folder in (cache, *cache.rglob("*")):
        if folder.is_dir():
            folder.chmod(0o755)
    (cache / prometheus3.MARKER).write_text(json.dumps({"suite": prometheus3.SUITE}) + "\n")
    return binaries


def test_a_cache_as_a_fetch_leaves_it_is_used(tmp_path: Path) -> None:
    binaries = fake_cache(tmp_path / "p3")
    assert prometheus3.problem(tmp_path / "p3") is None
    assert prometheus3.cached(tmp_path / "p3") == binaries
    assert prometheus3.version_of(binaries / "promtool") == (3, 5, 3)


def test_no_marker_another_major_version_or_a_missing_binary_is_no_cache(tmp_path: Path) -> None:
    assert "nothing fetched" in (prometheus3.problem(tmp_path / "none") or "")
    fake_cache(tmp_path / "two", version="2.42.0")
    assert "not Prometheus 3" in (prometheus3.problem(tmp_path / "two") or "")
    (fake_cache(tmp_path / "gone") / "promtool").unlink()
    assert "No such file" in (prometheus3.problem(tmp_path / "gone") or "")
    assert prometheus3.cached(tmp_path / "two") is None and prometheus3.cached(tmp_path / "gone") is None


@pytest.mark.parametrize("what", ["cache", "bin", "promtool"])
def test_a_cache_others_may_write_is_not_run(tmp_path: Path, what: str) -> None:
    binaries = fake_cache(tmp_path / "p3")
    path = {"cache": tmp_path / "p3", "bin": binaries, "promtool": binaries / "promtool"}[what]
    path.chmod(path.stat().st_mode | 0o002)
    assert "written by others" in (prometheus3.problem(tmp_path / "p3") or "")
    assert prometheus3.cached(tmp_path / "p3") is None


@pytest.mark.root
def test_a_cache_of_another_user_is_not_run(tmp_path: Path) -> None:
    binaries = fake_cache(tmp_path / "p3")
    if os.geteuid() != 0:
        pytest.fail("the unit tests run as root here (make test); chown needs it")
    os.chown(binaries / "prometheus", 65534, 65534)  # nobody
    assert "written by others" in (prometheus3.problem(tmp_path / "p3") or "")


def test_a_fetch_replaces_only_nothing_an_empty_folder_or_an_earlier_fetch(tmp_path: Path) -> None:
    assert prometheus3.replaceable(tmp_path / "new") is None
    (tmp_path / "empty").mkdir()
    assert prometheus3.replaceable(tmp_path / "empty") is None
    fake_cache(tmp_path / "earlier")
    assert prometheus3.replaceable(tmp_path / "earlier") is None
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me")
    assert "did not put there" in (prometheus3.replaceable(tmp_path / "notes") or "")
    (tmp_path / "afile").write_text("keep me")
    assert "not a folder" in (prometheus3.replaceable(tmp_path / "afile") or "")
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    assert "not a folder" in (prometheus3.replaceable(tmp_path / "link") or "")


@pytest.mark.parametrize("where", ["notes", "afile", "/", "x/.."])
def test_a_fetch_into_what_it_may_not_replace_fails_before_downloading_and_leaves_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me")
    (tmp_path / "afile").write_text("keep me")
    monkeypatch.setattr(prometheus3, "mirror", lambda: pytest.fail("a refused fetch must not reach a mirror"))
    with pytest.raises(prometheus3.FetchError):
        prometheus3.fetch(tmp_path / where if not where.startswith("/") else Path(where))
    assert (tmp_path / "notes" / "mine.txt").read_text() == "keep me" and (tmp_path / "afile").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "notes"]


def test_check_says_why_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_cache(tmp_path / "two", version="2.42.0")
    assert prometheus3.main(["--dir", str(tmp_path / "two"), "--check"]) == 1
    assert "not Prometheus 3" in capsys.readouterr().err
    fake_cache(tmp_path / "three")
    assert prometheus3.main(["--dir", str(tmp_path / "three"), "--check", "--version"]) == 0
    assert capsys.readouterr().out.strip() == "3.5.3"
