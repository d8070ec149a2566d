"""One step of the light rados probe (write, read or remove) over many OSDs at once: at most `workers` ops
in flight, and no op on an OSD sooner than a second after the previous one on it. Phase by phase rather
than OSD by OSD, so the second between two ops on one OSD is spent on other OSDs: a round of 1,000 OSDs
takes seconds, not the 250 s that eight OSDs at a time, each paced alone, took."""

import threading
import time
from typing import Any, Callable, Dict, List, Tuple

from ..base import BenchError

PACE_SECONDS = 1.0  # between two ops on one OSD


class ProbePhases:
    def __init__(self, ctx: Any, workers: int) -> None:
        """ctx: the run's Context (check, remaining, progress, log; unsettled is set when an op may still
        land after the run)."""
        self._ctx = ctx
        self._workers = max(1, workers)
        self._last_op: Dict[int, float] = {}  # OSD -> when its previous op started (monotonic)
        self.errors: List[str] = []

    def _stopped(self) -> bool:
        try:
            self._ctx.check()
        except Exception:
            return True
        return False

    def run(self, step: str, todo: List[Tuple[int, str]], op: Callable[[str], Any]) -> Dict[int, Any]:
        """op(object name) for each (OSD, name) of todo; OSD -> what op returned, for those it did not fail.
        Raises what ctx.check raises (cancelled, deadline) once the ops started have ended."""
        queue = list(reversed(todo))
        out: Dict[int, Any] = {}
        lock = threading.Lock()
        done = [0]

        def worker() -> None:
            while not self._stopped():
                with lock:
                    if not queue:
                        return
                    osd, name = queue.pop()
                wait = self._last_op.get(osd, float("-inf")) + PACE_SECONDS - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                self._last_op[osd] = time.monotonic()
                try:
                    value = op(name)
                except Exception as exc:  # nothing may escape a probe thread
                    with lock:
                        self.errors.append("osd.{}: {}: {}".format(osd, step, exc))
                    if not isinstance(exc, BenchError) or "no answer" in str(exc):
                        self._ctx.unsettled = True
                    continue
                with lock:
                    out[osd] = value
                    done[0] += 1

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(min(self._workers, len(todo)))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=max(1.0, self._ctx.remaining()))
            if thread.is_alive():  # an op past the deadline: it may still land
                self._ctx.unsettled = True
        self._ctx.progress(min(1.0, done[0] / max(1, len(todo))), "rados probe: " + step)
        self._ctx.check()
        return out
