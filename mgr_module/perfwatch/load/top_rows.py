"""`ceph perfwatch top`: the last load window as a table, busiest first, by pool or by client, of the whole
cluster or of one OSD and/or one pool; plain text for people, JSON for tools. Pure."""

from typing import Any, Dict, Optional

from .tally import Counts, Window, busiest, group, rates, sampled_osds

ROWS_MAX = 50
NAMES_SHOWN = 20  # pool names an error lists at most
BY = ("pool", "client")


class TopError(ValueError):
    """Arguments that select nothing they could: the message says what is accepted."""


def rows(
    win: Window,
    names: Dict[int, str],
    by: str,
    osd: Optional[int] = None,
    pool: Optional[str] = None,
    need_clients: bool = True,
) -> Dict[str, Any]:
    """{"window_seconds", "by", "osd", "pool", "sampled", "rows": [...]}: the busiest pools or clients,
    ops and bytes per second and mean OSD-side latency by read/write, and each one's share of the ops.
    need_clients: --by client without a client query is an error (False: no rows, as for no window)."""
    if by not in BY:
        raise TopError("--by {!r}: accepted: {}".format(by, " or ".join(BY)))
    if osd is not None and osd < 0:
        raise TopError("--osd {}: an OSD id is 0 or more".format(osd))
    pool_id: Optional[int] = None
    if pool is not None:
        ids = [i for i, name in names.items() if name == pool]
        if not ids:
            known = sorted(names.values())
            shown = ", ".join(repr(n) for n in known[:NAMES_SHOWN]) + (", ..." if len(known) > NAMES_SHOWN else "")
            raise TopError("--pool {!r}: no such pool in the last window (pools: {})".format(pool, shown or "none"))
        pool_id = ids[0]
    if by == "pool":
        chosen = {
            k: c for k, c in win.pools.items() if (osd is None or k[1] == osd) and (pool_id is None or k[0] == pool_id)
        }
        per = group(chosen, lambda k: names.get(k[0], "pool {}".format(k[0])))
        seconds = win.seconds
    else:
        if win.client_limit <= 0 and need_clients:
            raise TopError("no client query: load_client_sample is 0 (or load_attribution is off)")
        chosen_c = {
            k: c
            for k, c in win.clients.items()
            if (osd is None or k[2] == osd) and (pool_id is None or k[1] == pool_id)
        }
        per = group(chosen_c, lambda k: k[0])
        seconds = win.client_seconds
    all_ops = sum(c.ops for c in per.values())
    out = [_row(name, counts, seconds, all_ops) for name, counts in busiest(per, ROWS_MAX)]
    sampled = by == "client" and sampled_osds(win) > 0
    return {"window_seconds": round(seconds, 1), "by": by, "osd": osd, "pool": pool, "sampled": sampled, "rows": out}


def _row(name: str, counts: Counts, seconds: float, all_ops: float) -> Dict[str, Any]:
    row: Dict[str, Any] = {"name": name, "ops_share": round(counts.ops / all_ops, 4) if all_ops else 0.0}
    for op, ops, size, latency in rates(counts, seconds):
        row[op + "_ops"] = round(ops, 2)
        row[op + "_bytes"] = round(size, 1)
        row[op + "_latency_ms"] = round(latency * 1000, 3) if latency is not None else None
    return row


def render_plain(report: Dict[str, Any]) -> str:
    where = " on osd.{}".format(report["osd"]) if report["osd"] is not None else ""
    where += " in pool {}".format(report["pool"]) if report["pool"] is not None else ""
    lines = [
        "busiest {}s{} over the last {:.0f} s (OSD perf queries; latency as the primary OSD saw it){}".format(
            report["by"], where, report["window_seconds"], ": clients sampled, approximate" if report["sampled"] else ""
        )
    ]
    if report.get("note"):
        lines.append("  " + report["note"])
    if not report["rows"]:
        lines.append("  no client I/O counted")
        return "\n".join(lines) + "\n"
    lines.append(
        "  {:<24} {:>6} {:>10} {:>10} {:>11} {:>11} {:>9} {:>9}".format(
            report["by"], "ops %", "rd op/s", "wr op/s", "rd MB/s", "wr MB/s", "rd ms", "wr ms"
        )
    )
    for r in report["rows"]:
        lines.append(
            "  {:<24} {:>6.1f} {:>10.1f} {:>10.1f} {:>11.2f} {:>11.2f} {:>9} {:>9}".format(
                _printable(r["name"])[:24],
                100 * r["ops_share"],
                r["read_ops"],
                r["write_ops"],
                r["read_bytes"] / 1e6,
                r["write_bytes"] / 1e6,
                _ms(r["read_latency_ms"]),
                _ms(r["write_latency_ms"]),
            )
        )
    return "\n".join(lines) + "\n"


def _printable(name: str) -> str:
    """A pool name as the table shows it: control characters (a newline, a terminal escape) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def _ms(value: Optional[float]) -> str:
    return "-" if value is None else "{:.2f}".format(value)
