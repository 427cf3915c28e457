"""For benchmarks/ci_time.py: when TIMELINE_FILE is set, each test's worker, start and end, and
the CPU seconds its process and the children it waited for used (mkdocs, snippets, browsers:
counted when they end), one JSON line a test, appended to that file (tests/conftest.py loads
these hooks then). From it ci_time prints each test module's worker, span and CPU time: what ran
beside what, what waited, and what the two cores were spent on."""
from __future__ import annotations

import json
import os
import resource
import time

_starts: dict[str, tuple[float, float]] = {}


def _cpu() -> float:
    own, children = (resource.getrusage(who) for who in
                     (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_runtest_logstart(nodeid, location):
    _starts[nodeid] = (time.time(), _cpu())


def pytest_runtest_logfinish(nodeid, location):
    start, cpu = _starts.pop(nodeid, (time.time(), _cpu()))
    line = {"test": nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
            "start": start, "end": time.time(), "cpu": _cpu() - cpu}
    with open(os.environ["TIMELINE_FILE"], "a") as f:  # one short write a line
        f.write(json.dumps(line) + "\n")
