"""The OSD counters the mgr module collects (BlueStore, RocksDB, BlueFS, mempools), read here from the admin
sockets of this host's own OSDs instead (`--daemon-counters`, with the module's daemon_counters_source set to
`exporters`): for large clusters, where no single process should collect or serve the whole cluster.

The families and the table that reads them are the module's (perfwatch.common.daemon_counters), declared
with the labels every exporter series has besides ceph_daemon (cluster, hostname); the rules aggregate by
(cluster, ceph_daemon), so they read either source the same way. Pure but for `ask`, which the collector
passes in.
"""

import socket
from typing import Any, Callable, Dict, List, Tuple

from perfwatch.common.daemon_counters import counter_families as mf
from perfwatch.common.daemon_counters import counters
from perfwatch.common.daemon_counters.fetch_reasons import REASON_DECODE, REASON_ERROR, REASON_TIMEOUT
from perfwatch.common.metrics_model import Labels, Sample

from .asok import AsokDecode, AsokTimeout
from .families import EXPORTER_REGISTRY

PERF_DUMP = counters.PERF_DUMP  # what the exporter asks an RGW too (collector.py)
REASONS = (REASON_TIMEOUT, REASON_ERROR, REASON_DECODE)  # each exported from 0, so a rate sees the first failure

# every family an OSD's counters give, as the module declares it, and what says whether they were read
FAMILIES: Tuple[str, ...] = tuple(
    sorted(
        {spec.family for spec in counters.OSD_SPECS}
        | {mf.MEMPOOL_BYTES, mf.MEMPOOL_ITEMS, mf.MISSING, mf.UNAVAILABLE}
        | {mf.DAEMON_UP, mf.LAST_SUCCESS, mf.FETCH_ERRORS}
    )
)
_MODULE = {family.name: family for family in mf.DAEMON_COUNTER_REGISTRY.families()}
for _name in FAMILIES:
    _family = _MODULE[_name]
    EXPORTER_REGISTRY.declare(
        _family.name,
        _family.type,
        _family.help,
        (_family.labels[0], "cluster", "hostname", *_family.labels[1:]),
        _family.optional,
    )

Ask = Callable[[Dict[str, Any]], Any]  # one admin socket command to the OSD, its decoded JSON reply


class Failure(Exception):
    """The OSD's counters could not be read: reason is one of the module's (timeout, error, decode)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def read(ask: Ask, daemon: str) -> counters.Extracted:
    """The OSD's counter samples (labelled ceph_daemon only, as the module makes them), the table entries
    it lacks, and those its release does not have. Raises Failure."""
    try:
        dump = ask(counters.PERF_DUMP)  # its mempools too (the mempool logger)
    except AsokDecode as exc:  # as the module counts an answer that is not JSON
        raise Failure(REASON_DECODE, str(exc)) from None
    except Exception as exc:
        timeout = isinstance(exc, (AsokTimeout, socket.timeout))
        raise Failure(REASON_TIMEOUT if timeout else REASON_ERROR, str(exc)) from None
    try:
        return counters.osd_counters(dump, daemon)
    except counters.NotAnObject as exc:
        raise Failure(REASON_DECODE, "{}: {}".format(daemon, exc)) from None
    except Exception as exc:  # a surprising entry in one OSD's reply: counted; its other samples stay
        raise Failure(REASON_DECODE, "{}: {!r}".format(daemon, exc)) from None


def placed(samples: List[Sample], cluster: str, hostname: str) -> List[Sample]:
    """The module's samples with the exporter's cluster and hostname labels after ceph_daemon."""
    where: Labels = (("cluster", cluster), ("hostname", hostname))
    return [s._replace(labels=(s.labels[0], *where, *s.labels[1:])) for s in samples]


def status_samples(
    daemon: str, got: counters.Extracted, ok: bool, last_success: float, errors: Dict[str, int]
) -> List[Sample]:
    """What the module says of each daemon it reads, for this one: up, when last read, the entries it lacks,
    and failures by reason, every reason from 0 (labelled ceph_daemon only; placed() adds the rest)."""
    base: Labels = (("ceph_daemon", daemon),)
    out = [Sample(mf.DAEMON_UP, "", base, 1.0 if ok else 0.0)]
    if last_success:
        out.append(Sample(mf.LAST_SUCCESS, "", base, round(last_success, 3)))
    if ok:
        out.append(Sample(mf.MISSING, "", base, float(len(got.missing))))
        out.extend(Sample(mf.UNAVAILABLE, "", (*base, ("counter", name)), 1.0) for name in got.unavailable)
    out.extend(Sample(mf.FETCH_ERRORS, "", (*base, ("reason", r)), float(errors.get(r, 0))) for r in REASONS)
    return out
