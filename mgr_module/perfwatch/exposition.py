"""Prometheus text exposition (format 0.0.4) of our samples. Pure."""

import math
from typing import Dict, Iterable, List

from .metrics_model import Family, Registry, Sample

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
    family's a ValueError: both are bugs, never silent output."""
    grouped: Dict[str, List[Sample]] = {}
    families: Dict[str, Family] = {}
    for sample in samples:
        families[sample.family] = registry.family_of(sample)
        grouped.setdefault(sample.family, []).append(sample)
    out: List[str] = []
    for name, group in grouped.items():
        family = families[name]
        full = PREFIX + name
        out.append("# HELP {} {}".format(full, escape_help(family.help)))
        out.append("# TYPE {} {}".format(full, family.type))
        for sample in group:
            if sample.labels:
                labels = ",".join('{}="{}"'.format(k, escape_label(v)) for k, v in sample.labels)
                out.append("{}{}{{{}}} {}".format(full, sample.suffix, labels, format_value(sample.value)))
            else:
                out.append("{}{} {}".format(full, sample.suffix, format_value(sample.value)))
    return "\n".join(out) + "\n" if out else ""
