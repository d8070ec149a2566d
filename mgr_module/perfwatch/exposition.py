"""Prometheus text exposition (format 0.0.4) of our samples. Pure."""

import math
from typing import Dict, Iterable, List, Tuple

from .metrics_model import Labels, Registry, Sample

PREFIX = "ceph_perfwatch_"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def render(registry: Registry, samples: Iterable[Sample]) -> str:
    """HELP and TYPE once per family, its samples together, families in the order first seen.

    A sample of a family the registry lacks is a KeyError, one whose suffix or label names are not its
    family's a ValueError: both are bugs, never silent output. Each distinct label set is escaped and
    joined once (an OSD's ceph_daemon label serves all its counters: a third of the render at 10,000 OSDs)."""
    grouped: Dict[str, List[Sample]] = {}
    for sample in samples:
        grouped.setdefault(sample.family, []).append(sample)
    texts: Dict[Labels, Tuple[str, Tuple[str, ...]]] = {}  # label set -> its text and label names
    out: List[str] = []
    for name, group in grouped.items():
        full = PREFIX + name
        family = registry.family(name)
        out.append("# HELP {} {}".format(full, escape_help(family.help)))
        out.append("# TYPE {} {}".format(full, family.type))
        for sample in group:
            known = texts.get(sample.labels)
            if known is None:
                text = ",".join('{}="{}"'.format(k, escape_label(v)) for k, v in sample.labels)
                known = texts[sample.labels] = ("{" + text + "}" if text else "", tuple(k for k, _ in sample.labels))
            registry.accept(name, sample.suffix, known[1])
            out.append("{}{}{} {}".format(full, sample.suffix, known[0], format_value(sample.value)))
    return "\n".join(out) + "\n" if out else ""
