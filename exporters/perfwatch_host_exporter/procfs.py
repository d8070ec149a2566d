"""Parsers for /proc/PID files. Pure: text in, values out."""

from typing import List, NamedTuple


class ProcStat(NamedTuple):
    comm: str
    utime_ticks: int  # field 14
    stime_ticks: int  # field 15
    threads: int  # field 20
    start_ticks: int  # field 22: start time after boot, in clock ticks (with the PID, names one process)
    rss_pages: int  # field 24


def parse_stat(text: str) -> ProcStat:
    """/proc/PID/stat. The comm (field 2) is in parentheses and may itself hold spaces and parentheses,
    so the numbered fields are counted from after the *last* ')'."""
    open_at = text.find("(")
    close_at = text.rfind(")")
    if open_at < 0 or close_at < open_at:
        raise ValueError("not a /proc/PID/stat line: {!r}".format(text[:80]))
    rest = text[close_at + 1 :].split()  # rest[0] is field 3 (state)

    def field(number: int) -> int:
        return int(rest[number - 3])

    try:
        return ProcStat(text[open_at + 1 : close_at], field(14), field(15), field(20), field(22), field(24))
    except IndexError:
        raise ValueError("short /proc/PID/stat line ({} fields)".format(len(rest) + 2)) from None


def parse_cmdline(raw: bytes) -> List[str]:
    """/proc/PID/cmdline: NUL-separated arguments (with a trailing NUL)."""
    if not raw:
        return []
    return [arg.decode("utf-8", "replace") for arg in raw.rstrip(b"\0").split(b"\0")]
