"""The worker threads: they call the app for complete requests, in arrival order, and hand back bytes.

A request that waited longer than queue_timeout is answered 503 without calling the app: by the
worker that takes it, or, when no worker is free (the app hangs in all of them), by the loop, which
takes it back with expired().
"""

import collections
import logging
import threading
import time
from typing import Callable, Deque, List, NamedTuple, Optional

from . import httpwire
from .basic_auth import status_of
from .conn import Conn
from .limits import Limits
from .responses import App, encode, error
from .security import OPEN_PATHS, Security


class Job(NamedTuple):
    conn: Conn  # workers only hand it back
    request: httpwire.Request
    queued_at: float  # time.monotonic()


class WorkerPool:
    """limits.workers threads that call app; done(job, data) receives each answer, in a worker's thread.
    With basic auth (security.auth()), a request without the right credentials gets 401 instead of the
    app (but for OPEN_PATHS), and refused(reason, detail) is told."""

    def __init__(
        self,
        app: App,
        limits: Limits,
        log: logging.Logger,
        done: Callable[[Job, List[bytes]], None],
        security: Optional[Security] = None,
        refused: Optional[Callable[[str, str], None]] = None,
    ) -> None:
        self.app = app
        self.limits = limits
        self.log = log
        self.done = done
        self.security = security or Security()
        self.refused = refused or (lambda reason, detail: None)
        self._pending: Deque[Job] = collections.deque()  # oldest first
        self._cond = threading.Condition()
        self._stopping = False

    def start(self, name: str) -> List[threading.Thread]:
        threads = [
            threading.Thread(target=self._work, name="{}-{}".format(name, i), daemon=True)
            for i in range(self.limits.workers)
        ]
        for thread in threads:
            thread.start()
        return threads

    def stop(self) -> None:
        """Drop the waiting jobs and let idle workers exit (a worker inside the app is not waited for)."""
        with self._cond:
            self._stopping = True
            self._pending.clear()
            self._cond.notify_all()

    def submit(self, job: Job) -> None:
        with self._cond:
            self._pending.append(job)
            self._cond.notify()

    def expired(self, now: float) -> List[Job]:
        """Take back the jobs that have waited longer than queue_timeout: no worker will see them."""
        jobs = []
        with self._cond:
            while self._pending and now - self._pending[0].queued_at > self.limits.queue_timeout:
                jobs.append(self._pending.popleft())
        return jobs

    def _unauthorised(self, job: Job) -> Optional[str]:
        """Why basic auth refuses the request (a refusal reason, counted), or None."""
        auth = self.security.auth()
        if auth is None or job.request.target.split("?", 1)[0] in OPEN_PATHS:
            return None
        peer = job.conn.peer[0] if isinstance(job.conn.peer, tuple) and job.conn.peer else ""
        why = auth.refusal(job.request.headers.get("authorization"), str(peer))
        if why is not None:
            self.refused(why, httpwire.printable("{} {} from {}".format(job.request.method, job.request.target, peer)))
        return why

    def _next(self) -> Optional[Job]:
        with self._cond:
            while not self._pending and not self._stopping:
                self._cond.wait()
            return None if self._stopping else self._pending.popleft()

    def _work(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            head_only = job.request.method == "HEAD"
            if time.monotonic() - job.queued_at > self.limits.queue_timeout:
                data = error(503, head_only)
            else:
                try:
                    why = self._unauthorised(job)
                    if why is not None:
                        status, headers = status_of(why)
                        data = error(status, head_only, headers)
                    else:
                        accepts_gzip = httpwire.accepts_gzip(job.request.headers.get("accept-encoding"))
                        data = encode(self.app(job.request.target, accepts_gzip), head_only)
                except Exception:  # a bug answers 500; the worker lives on
                    self.log.exception("error answering %s", httpwire.printable(job.request.target))
                    data = error(500, head_only)
            self.done(job, data)
