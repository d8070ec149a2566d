"""Prometheus text exposition (format 0.0.4) of our samples. Pure."""

import math
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

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


Value = Union[int, float, str]  # a sample's value ready for "%s": str only for NaN and infinities
EXACT_INTEGERS = 10**15  # integers below this are written as they are; larger ones as floats


def exposable(raw: Any) -> Optional[Value]:
    """A value as format_value writes it, ready for "%s" (what a Column holds), or None when it is not a
    number: whole numbers up to 1e15 as ints (a float 3.0 is written 3), NaN and infinities in Prometheus'
    spelling. OverflowError for an integer no float can hold (it would fail the scrape)."""
    kind = raw.__class__
    if kind is float and -EXACT_INTEGERS < raw < EXACT_INTEGERS:  # finite (NaN compares false): the common case
        return int(raw) if raw.is_integer() else raw
    if kind is int and -EXACT_INTEGERS < raw < EXACT_INTEGERS:
        return raw
    if isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, int):
        raw = float(raw)
    if not isinstance(raw, float):
        return None
    if math.isnan(raw):
        return "NaN"
    if math.isinf(raw):
        return "+Inf" if raw > 0 else "-Inf"
    return raw


LabelTexts = Dict[Labels, Tuple[str, Tuple[str, ...]]]  # label set -> its text ({...}) and its label names


class Column(NamedTuple):
    """Series of one family that differ only in the value of one label (ceph_daemon, mostly), written from
    one template without a Sample each: at 10,000 OSDs a per-OSD family is 10,000 series, and a Sample and
    a label tuple each, kept until the cycle ends, cost more to make, to render and to garbage-collect than
    the line itself."""

    family: str
    suffix: str
    label: str  # the label whose value differs, written first
    fixed: Labels  # the labels every series of the column has, after it
    series: Sequence[Tuple[str, Value]]  # (that label's value, the value as exposable() gives it)


Item = Union[Sample, Column]


def render(registry: Registry, items: Iterable[Item], texts: Optional[LabelTexts] = None) -> str:
    """HELP and TYPE once per family, its samples and columns together (columns first), families in the
    order first seen; a family with no series is left out.

    A sample or column of a family the registry lacks is a KeyError, one whose suffix or label names are not
    its family's a ValueError: both are bugs, never silent output. Each distinct label set of a sample is
    escaped and joined once (an OSD's ceph_daemon label serves all its counters); `texts` carries them from
    one render to the next (a Renderer's)."""
    grouped: Dict[str, Tuple[List[Column], List[Sample]]] = {}
    for item in items:
        group = grouped.get(item.family)
        if group is None:
            group = grouped[item.family] = ([], [])
        if item.__class__ is Column:
            group[0].append(item)  # type: ignore[arg-type]
        else:
            group[1].append(item)  # type: ignore[arg-type]
    if texts is None:
        texts = {}
    escaped: Dict[str, str] = {}  # a column's label value -> escaped (a daemon's name, in many columns)
    out: List[str] = []
    for name, (columns, samples) in grouped.items():
        full = PREFIX + name
        lines: List[str] = []
        for column in columns:
            registry.accept(name, column.suffix, (column.label, *(k for k, _ in column.fixed)))
            fixed = "".join(',{}="{}"'.format(k, escape_label(v)) for k, v in column.fixed).replace("%", "%%")
            template = full + column.suffix + "{" + column.label + '="%s"' + fixed + "} %s"
            for first, _value in column.series:
                if first not in escaped:
                    escaped[first] = escape_label(first)
            lines.extend([template % (escaped[first], value) for first, value in column.series])
        for sample in samples:
            known = texts.get(sample.labels)
            if known is None:
                text = ",".join('{}="{}"'.format(k, escape_label(v)) for k, v in sample.labels)
                known = texts[sample.labels] = ("{" + text + "}" if text else "", tuple(k for k, _ in sample.labels))
            registry.accept(name, sample.suffix, known[1])
            lines.append("{}{}{} {}".format(full, sample.suffix, known[0], format_value(sample.value)))
        if lines:
            family = registry.family(name)
            out.append("# HELP {} {}".format(full, escape_help(family.help)))
            out.append("# TYPE {} {}".format(full, family.type))
            out.extend(lines)
    return "\n".join(out) + "\n" if out else ""


class Renderer:
    """render(), keeping each label set's text from one render to the next: a collection renders the same
    label sets every cycle, and escaping and joining them again was a third of its render. Label sets no
    longer rendered (a removed daemon's) stay until the texts outnumber the items of a render twice over;
    then they start again from that render's."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._texts: LabelTexts = {}

    def render(self, items: List[Item]) -> str:
        if len(self._texts) > 2 * len(items):
            self._texts = {}
        return render(self.registry, items, self._texts)


def as_samples(items: Iterable[Item]) -> List[Sample]:
    """Samples and columns as samples only (a column's series each with its labels, in the column's order)."""
    out: List[Sample] = []
    for item in items:
        if isinstance(item, Column):
            out.extend(
                Sample(item.family, item.suffix, ((item.label, first), *item.fixed), float(value))
                for first, value in item.series
            )
        else:
            out.append(item)
    return out
