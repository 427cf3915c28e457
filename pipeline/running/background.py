"""`make serve` on a fresh clone: the server answers at once, and the stale snippets run in a
background thread meanwhile.

Each build under `mkdocs serve` takes what the cache holds (runner.run_all without executing);
a snippet with no result yet is *pending*: its page says it is running (pipeline/pages/hooks/build.py).
If any is pending and no background run is going on, one starts: the runner as a build runs it
(benchmarks alone, the others side by side, its progress lines in the server's log). Each
snippet that ends marks the pages out of date; once a second, while the server watches, a mark
touches a file it watches, so the server rebuilds and the pages fill in as outputs arrive (the
snippets that end during a rebuild make one more rebuild, not one each; those that end before
the server starts watching make one when it does). A snippet
that fails is remembered with its cache key and shown as failed, not run again, until it
changes. `mkdocs build` never comes here: a build that is published or tested runs every stale
snippet first and stops on a failure.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

from pipeline.running import device, runner
from pipeline.running.cache import key_for

RELOAD_DIR = "serve-reload"  # under the project's .cache: the folder the server watches


class Background:
    def __init__(self, project: runner.Project):
        self.project = project
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()
        self.failed: dict[str, tuple[str, runner.Outcome]] = {}  # rel: (cache key, outcome)
        self.out_of_date = False  # a snippet ended since the server last rebuilt
        self.watching_from: float | None = None  # time.monotonic() when the server watches
        self.notifier: threading.Thread | None = None
        # The first build's log while it runs: its snippets wait for the server to serve it
        # (MkDocs calls on_serve after the first build), so that the first page is not slowed
        # by snippets that take both cores.
        self.first_build_log: Callable[[str], None] | None = None

    def watched(self) -> None:
        """The server watches the reload file from now on (its observer starts shortly), and
        serves the first build: the background run that build found work for starts now."""
        self.watching_from = time.monotonic() + 1.0
        with self.lock:
            if self.first_build_log is not None and not self.running():
                self._start(self.first_build_log)
            self.first_build_log = None

    @property
    def reload_dir(self) -> Path:
        return self.project.cache / RELOAD_DIR

    def outcomes(self, log: Callable[[str], None]) -> tuple[list[runner.Outcome], set[str]]:
        """This build's outcomes, running nothing, and the snippets still pending; starts the
        background run when something is pending and none is going on."""
        outcomes = runner.run_all(self.project, execute_stale=False)
        kind = device.device_kind()
        found, pending = [], set()
        with self.lock:
            for o in outcomes:
                if o.status == runner.NOT_RUN:
                    key = key_for(o.snippet, self.project.requirements, kind)
                    failed = self.failed.get(o.snippet.rel)
                    if failed and failed[0] == key:
                        o = failed[1]
                    else:
                        pending.add(o.snippet.rel)
                found.append(o)
            if pending and not self.running():
                if self.watching_from is None:  # the first build: the server is not up yet
                    self.first_build_log = log
                else:
                    self._start(log)
            if self.notifier is None:
                self.notifier = threading.Thread(target=self._notify, daemon=True,
                                                 name="snippets-reload")
                self.notifier.start()
        return found, pending

    def _start(self, log: Callable[[str], None]) -> None:
        self.thread = threading.Thread(target=self._run, args=(log,), daemon=True,
                                       name="snippets-in-background")
        self.thread.start()

    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def _run(self, log: Callable[[str], None]) -> None:
        kind = device.device_kind()

        def done(o: runner.Outcome) -> None:
            if not o.executed:
                return
            with self.lock:
                if o.status in runner.GOOD:
                    self.failed.pop(o.snippet.rel, None)
                else:
                    self.failed[o.snippet.rel] = (
                        key_for(o.snippet, self.project.requirements, kind), o)
            self.reload()

        try:
            runner.run_all(self.project, progress=log, on_done=done)
        except Exception as e:  # a bad snippet header: the next build reports it
            log(f"snippets: the background run stopped: {e}")
        self.reload()

    def reload(self) -> None:
        """Mark the pages out of date: the notifier has the server rebuild them."""
        self.out_of_date = True

    def _notify(self) -> None:
        """Once a second: when pages are out of date and the server watches, touch the file it
        watches; the server rebuilds, and the open pages reload."""
        while True:
            time.sleep(1.0)
            if self.out_of_date and self.watching_from and time.monotonic() >= self.watching_from:
                self.out_of_date = False
                self.reload_dir.mkdir(parents=True, exist_ok=True)
                (self.reload_dir / "ran").write_text(f"{time.time()}\n")
