"""The record of which lab directory holds a lab name (dev/lab/claims.py), in a claims folder of the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab import claims


@pytest.fixture(autouse=True)
def claims_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claims"
    monkeypatch.setenv(claims.CLAIMS_ENV, str(folder))
    return folder


def test_an_unclaimed_name_has_no_holder() -> None:
    assert claims.holder("pwlab") is None


def test_a_claim_names_the_resolved_directory_and_replaces_an_older_one(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    claims.claim("pwlab", first)
    assert claims.holder("pwlab") == first.resolve()
    claims.claim("pwlab", tmp_path / "x" / ".." / "b")
    assert claims.holder("pwlab") == second.resolve()
    assert claims.holder("other") is None


def test_release_forgets_only_the_claim_of_that_directory(tmp_path: Path, claims_folder: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    claims.claim("pwlab", theirs)
    claims.release("pwlab", mine)  # not ours: kept
    assert claims.holder("pwlab") == theirs.resolve()
    claims.release("pwlab", theirs)
    assert claims.holder("pwlab") is None
    claims.release("pwlab", theirs)  # twice: nothing to do, no error
    assert sorted(p.name for p in claims_folder.iterdir()) == []  # no temporary file left either


@pytest.mark.parametrize("text", ["", "relative/dir\n", "/a\n/b\n", "   "])
def test_a_record_that_is_not_one_absolute_path_is_no_claim(claims_folder: Path, text: str) -> None:
    claims_folder.mkdir()
    (claims_folder / "pwlab").write_text(text)
    assert claims.holder("pwlab") is None


def test_a_holder_with_a_running_process_is_never_taken_over() -> None:
    why = claims.refusal("pwlab", Path("/x/lab"), ["mon.a", "osd.0", "osd.1", "mgr.x"], ["pwlab-br"])
    assert why is not None
    assert "taken by the lab running in /x/lab (mon.a, osd.0, osd.1 and 1 more)" in why
    assert "python3 -m lab --dir /x/lab down" in why


@pytest.mark.parametrize("names", [["eth0"], ["pwlab-br", "pwother-h1"], ["pwlabx-h1"], ["pwlab"]])
def test_a_holder_whose_state_lists_names_not_of_its_lab_is_not_taken_over(names: list[str]) -> None:
    why = claims.refusal("pwlab", Path("/x/lab"), [], names)
    assert why is not None and "not names of a lab called 'pwlab'" in why


def test_a_dead_holder_with_only_its_own_names_may_be_taken_over() -> None:
    assert claims.refusal("pwlab", Path("/x/lab"), [], ["pwlab-br", "pwlab-h1", "pwlab-cl"]) is None
    assert claims.refusal("pwlab", Path("/x/lab"), [], []) is None
