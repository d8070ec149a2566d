"""How Ceph's own exporters name the perf counters they export, restated from their source, so a test
can tell which names they may ever produce.

- `ceph-exporter` (Quincy and later, one per host, port 9926): for every admin socket in its
  `--sock-dir` but the mgr's and its own, `counter schema` + `counter dump` (labeled counters: a list
  of {labels, counters} per logger); every counter of priority >= `--prio-limit` (default 5) becomes
  `ceph_` + promethize(logger + "_" + counter), with `_sum` and `_count` for long-running averages. Its
  own families are `ceph_exporter_*` (scrape_time, cpu_total, num_threads, resident_size, ...).
  Labels: the counter's own labels, plus `ceph_daemon` (the socket's name without "ceph-" and
  "client.": "osd.0"), or `instance_id` for an RGW. (src/exporter/DaemonMetricCollector.cc, util.cc)
- the mgr `prometheus` module: the same promethize() on "<logger>.<counter>" paths (its docstring says
  the two "must be kept in sync"), label `ceph_daemon`; since Quincy only with
  `mgr/prometheus/exclude_perf_counters=false` (default true).
"""

from __future__ import annotations

from typing import Any


def promethize(path: str) -> str:
    """Ceph's promethize(): "." "/" " " "-" become "_", "::" becomes "_", "+" becomes "_plus", a
    trailing "-" becomes "_minus"; prefixed "ceph_"."""
    if path.endswith("-"):
        path = path[:-1] + "_minus"
    for ch in "./ -":
        path = path.replace(ch, "_")
    path = path.replace("::", "_").replace("+", "_plus")
    return "ceph_" + path


PERFCOUNTER_LONGRUNAVG = 0x4


def counter_family_names(logger: str, counter: str, type_: int) -> list[str]:
    """The sample names ceph-exporter writes for one counter."""
    name = promethize(logger + "_" + counter)
    if type_ & PERFCOUNTER_LONGRUNAVG:
        return [name + "_sum", name + "_count"]
    return [name]


def exporter_labels(socket_name: str) -> dict[str, str]:
    """The daemon label ceph-exporter adds, from the socket's file name without ".asok"."""
    name = socket_name[len("ceph-") :] if socket_name.startswith("ceph-") else socket_name
    name = name[len("client.") :] if name.startswith("client.") else name
    if "radosgw" in name:
        return {"instance_id": name.rsplit(".", 1)[-1]}
    if "rgw" in name:
        parts = name.split(".")
        return {"instance_id": parts[3]} if len(parts) >= 4 else {}  # none: the RGW is skipped
    return {"ceph_daemon": name}


def emulate(socket_name: str, schema: dict[str, Any], dump: dict[str, Any], prio_limit: int = 5) -> list[str]:
    """The exposition lines ("name{labels} value") ceph-exporter makes of one daemon's counter schema
    and dump; an RGW whose socket name has no instance id gives none, as in ceph-exporter."""
    extra = exporter_labels(socket_name)
    if not extra:
        return []
    lines = []
    for logger, instances in schema.items():
        for inst_schema, inst_dump in zip(instances, dump.get(logger, []), strict=True):
            labels = dict(inst_schema.get("labels") or {}, **extra)
            text = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
            for counter, info in inst_schema["counters"].items():
                if info["priority"] < prio_limit:
                    continue
                value = inst_dump["counters"][counter]
                names = counter_family_names(logger, counter, info["type"])
                values = [value["sum"], value["avgcount"]] if info["type"] & PERFCOUNTER_LONGRUNAVG else [value]
                lines.extend(f"{n}{{{text}}} {v}" for n, v in zip(names, values, strict=True))
    return lines
