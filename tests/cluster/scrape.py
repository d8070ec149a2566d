"""Scrape a /metrics endpoint into samples, and the sums and rates the saturation tests assert on."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from .labutil import REPO, LabHandle


@dataclass(frozen=True)
class Scrape:
    at: float
    samples: list[tuple[str, dict[str, str], float]]

    def find(self, name: str, **labels: str) -> list[tuple[dict[str, str], float]]:
        return [
            (lbl, value)
            for sample_name, lbl, value in self.samples
            if sample_name == name and all(lbl.get(k) == v for k, v in labels.items())
        ]

    def total(self, name: str, **labels: str) -> float | None:
        """Sum of the matching samples; None when there are none."""
        found = self.find(name, **labels)
        return sum(v for _, v in found) if found else None


# The perfwatch endpoints answer from the cache of a background collection and say how old it is.
CACHE_AGES = ("ceph_perfwatch_exporter_cache_age_seconds", "ceph_perfwatch_cache_age_seconds")


def scrape(url: str, timeout: float = 15) -> Scrape:
    """The samples of one GET, timed when they were collected: the request time, less the cache's age
    where the endpoint serves a cache (the perfwatch module and host exporter)."""
    at = time.monotonic()
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        text = resp.read().decode()
    samples = [
        (s.name, dict(s.labels), s.value) for family in text_string_to_metric_families(text) for s in family.samples
    ]
    ages = [value for name, _, value in samples if name in CACHE_AGES]
    return Scrape(at - (ages[0] if ages else 0.0), samples)


def scrape_since(url: str, since: float, timeout: float = 30) -> Scrape:
    """A scrape of samples collected after `since` (time.monotonic()): the perfwatch endpoints answer from
    the cache of their last collection, which may predate a change a test has just made."""
    deadline = time.monotonic() + timeout
    while True:
        result = scrape(url)
        if result.at >= since:
            return result
        assert time.monotonic() < deadline, f"no collection after the change within {timeout} s: {url}"
        time.sleep(0.25)


def rate(a: Scrape, b: Scrape, name: str, **labels: str) -> float:
    """Per-second increase of a counter (the sum of the matching samples) between two scrapes."""
    first, second = a.total(name, **labels), b.total(name, **labels)
    assert first is not None and second is not None, f"{name}{labels} missing from a scrape"
    return (second - first) / (b.at - a.at)


@dataclass
class LoadRun:
    """What `python3 -m lab load` reported, once it has finished."""

    iops: float = 0.0
    mb_per_second: float = 0.0
    line: str = ""


@contextmanager
def client_load(lab: LabHandle, pattern: str, seconds: float) -> Iterator[LoadRun]:
    """`python3 -m lab load` in the background for the body of the with; waits for it at the end."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lab", "--dir", str(lab.dir), "load", "--pattern", pattern, "--seconds", str(seconds)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    result = LoadRun()
    try:
        yield result
    finally:
        try:
            out, err = proc.communicate(timeout=seconds + 180)
        except subprocess.TimeoutExpired:
            proc.terminate()  # `lab load` stops its bench on the way out
            proc.communicate(timeout=60)
            raise
        assert proc.returncode == 0, err
        result.line = out.strip()
        match = re.search(r"([\d.]+) IOPS, ([\d.]+) MB/s", result.line)
        assert match, result.line
        result.iops, result.mb_per_second = float(match.group(1)), float(match.group(2))
