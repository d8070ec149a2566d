"""What the renderer works on: metric families, their samples, and the registry a family is declared in.

A Registry is an object handed to whoever declares families and to render(); there is no global one.
It refuses a second family whose sample names would collide with one already declared (suffixes
included, as prometheus_client does: a counter `x` beside a gauge `x_total`, a histogram `x` beside a
gauge `x_bucket`), and it knows each family's label names, so a sample that carries others is refused
when it is rendered. Pure.
"""

import re
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Tuple

Labels = Tuple[Tuple[str, str], ...]

TYPES = ("counter", "gauge", "summary", "histogram")

# The sample names a family of each type may produce, as suffixes of its base name (for a counter, the
# name without "_total"), the way prometheus_client reserves them.
_RESERVED: Dict[str, Tuple[str, ...]] = {
    "counter": ("", "_total", "_created"),
    "gauge": ("",),
    "summary": ("", "_sum", "_count", "_created"),
    "histogram": ("", "_bucket", "_sum", "_count", "_created"),
}
# The suffixes our samples carry (a counter's name ends in _total already), and the label each adds.
_SUFFIXES: Dict[str, Dict[str, Tuple[str, ...]]] = {
    "counter": {"": ()},
    "gauge": {"": ()},
    "summary": {"": ("quantile",), "_sum": (), "_count": ()},
    "histogram": {"_bucket": ("le",), "_sum": (), "_count": ()},
}
_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


class Family(NamedTuple):
    name: str  # without the ceph_perfwatch_ prefix
    type: str  # one of TYPES
    help: str
    labels: Tuple[str, ...] = ()  # the label names its samples carry (a sample may write them in any order)
    optional: Tuple[str, ...] = ()  # those of `labels` a sample may leave out


class Sample(NamedTuple):
    family: str  # the Family name
    suffix: str  # "" or "_sum" / "_count" for summaries, "_bucket" / "_sum" / "_count" for histograms
    labels: Labels
    value: float


def _reserved_names(name: str, type_: str) -> List[str]:
    base = name[: -len("_total")] if type_ == "counter" and name.endswith("_total") else name
    return [base + suffix for suffix in _RESERVED[type_]]


class Registry:
    """The families one exposition may carry, by name, in the order declared."""

    def __init__(self) -> None:
        self._families: Dict[str, Family] = {}
        self._taken: Dict[str, str] = {}  # every sample name a family reserves -> that family's name
        self._allowed: Dict[str, FrozenSet[str]] = {}
        self._required: Dict[str, FrozenSet[str]] = {}
        self._accepted: Dict[Tuple[str, str, Tuple[str, ...]], Family] = {}  # (family, suffix, label names)

    def declare(
        self, name: str, type_: str, help_: str, labels: Iterable[str] = (), optional: Iterable[str] = ()
    ) -> Family:
        """Add a family; ValueError if its name, type or labels are invalid or any name it reserves is taken."""
        family = Family(name, type_, help_, tuple(labels), tuple(optional))
        if type_ not in TYPES:
            raise ValueError("family {}: unknown type {!r}".format(name, type_))
        if not _METRIC_NAME.match(name):
            raise ValueError("family {!r}: not a valid metric name".format(name))
        for label in family.labels:
            if not _LABEL_NAME.match(label) or label.startswith("__"):
                raise ValueError("family {}: {!r} is not a valid label name".format(name, label))
        reserved_labels = {label for extra in _SUFFIXES[type_].values() for label in extra}
        if len(set(family.labels)) != len(family.labels) or reserved_labels & set(family.labels):
            raise ValueError("family {}: labels {} repeat a name or use a reserved one".format(name, family.labels))
        if not set(family.optional) <= set(family.labels):
            raise ValueError("family {}: optional labels {} are not among its labels".format(name, family.optional))
        names = _reserved_names(name, type_)
        for sample_name in names:
            if sample_name in self._taken:
                raise ValueError(
                    "family {} clashes with family {} over the name {}".format(
                        name, self._taken[sample_name], sample_name
                    )
                )
        self._families[name] = family
        self._taken.update((sample_name, name) for sample_name in names)
        self._allowed[name] = frozenset(family.labels)
        self._required[name] = frozenset(family.labels) - frozenset(family.optional)
        return family

    def families(self) -> Tuple[Family, ...]:
        return tuple(self._families.values())

    def __contains__(self, name: object) -> bool:
        return name in self._families

    def family(self, name: str) -> Family:
        """The family declared under `name`; KeyError if there is none."""
        family = self._families.get(name)
        if family is None:
            raise KeyError("sample of undeclared family {!r}".format(name))
        return family

    def family_of(self, sample: Sample) -> Family:
        """The sample's family; KeyError if it is undeclared, ValueError if its suffix or label names
        are not the family's."""
        return self.accept(sample.family, sample.suffix, tuple(label for label, _ in sample.labels))

    def accept(self, name: str, suffix: str, names: Tuple[str, ...]) -> Family:
        """family_of for a sample of family `name` with this suffix and these label names, in order."""
        shape = (name, suffix, names)
        family = self._accepted.get(shape)  # a shape checked once is not checked again
        if family is None:
            family = self._check(name, suffix, names)
            self._accepted[shape] = family
        return family

    def _check(self, name: str, suffix: str, names: Tuple[str, ...]) -> Family:
        family = self._families.get(name)
        if family is None:
            raise KeyError("sample of undeclared family {!r}".format(name))
        extra = _SUFFIXES[family.type].get(suffix)
        if extra is None:
            raise ValueError("a {} {} has no samples with suffix {!r}".format(family.type, name, suffix))
        given = frozenset(names)
        if (
            len(given) != len(names)
            or not (self._required[name] | frozenset(extra)) <= given
            or not given <= (self._allowed[name] | frozenset(extra))
        ):
            raise ValueError(
                "sample of {}{} has labels {}, the family declares {} (optional: {}){}".format(
                    name, suffix, names, family.labels, family.optional, " plus {}".format(extra) if extra else ""
                )
            )
        return family
