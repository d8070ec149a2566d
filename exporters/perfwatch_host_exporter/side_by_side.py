"""Running a collection's admin-socket work side by side, in a few threads, so that hung daemons cost the
collection about their timeout once (per ASK_WORKERS of them), not one after another. Why:
docs/decisions/adversarial-reviews.md#hung-daemons-asked-side-by-side.

Each job's own waits are bounded (asok.call's timeout); run_all waits for every job, so a read that no
timeout can end (a daemon in D state) still shows as a stuck collection (collection_loop.health)."""

import logging
import threading
from typing import Any, Callable, List, Optional, Sequence

ASK_WORKERS = 16  # threads at most per collection; a host rarely has more daemons than this

Job = Callable[[], Any]  # what it returns is dropped: a job keeps its outcome itself


def run_all(
    jobs: Sequence[Job],
    workers: int = ASK_WORKERS,
    name: str = "perfwatch-ask",
    log: Optional[logging.Logger] = None,
) -> None:
    """Run every job, at most `workers` at a time; returns when all have ended. Each job records its
    outcome itself: an exception that escapes one is a bug, logged (with its traceback, to `log` or this
    module's logger) and stopping none of the others. The caller's thread is one of the workers."""
    logger = log or logging.getLogger(__name__)
    pending: List[Job] = list(jobs)
    if not pending:
        return
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not pending:
                    return
                job = pending.pop(0)
            try:
                job()
            except Exception:  # a job records its own outcome; what escapes is a bug, and ends no worker
                logger.exception("a side-by-side job (%s) failed", getattr(job, "__name__", repr(job)))

    started: List[threading.Thread] = []
    for i in range(min(max(1, workers), len(pending)) - 1):  # the caller is a worker too
        thread = threading.Thread(target=work, name="{}-{}".format(name, i), daemon=True)
        try:
            thread.start()
        except RuntimeError:  # the process at its thread limit: fewer workers, the same jobs
            break
        started.append(thread)
    work()
    for thread in started:
        thread.join()
