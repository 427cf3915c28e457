"""benchmarks/build_speed.py works on a copy of the project as a fresh clone has it: no .venv,
no cache. The copy's C programs and its Node rendering work (what failed before); the full
timed builds are the benchmark's job, not a test's."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import build_speed  # noqa: E402

# The runner and the build, started in the copy as build_speed.py starts mkdocs: with this
# Python, but no virtualenv on PATH and none activated.
PROBE = """
import json, sys
from pathlib import Path
from pipeline.pages import static_render
from pipeline.running import runner
outcome, = runner.run_all(runner.Project(Path('.'), committed=False), only=['c/version.c'])
svg = static_render.render({'dot': ['digraph "a to b" { a -> b }']})
print(json.dumps({'status': outcome.status, 'problem': outcome.problem,
                  'stdout': outcome.stdout, 'rendered': bool(svg)}))
"""


def test_the_copy_has_no_venv_and_still_builds_c_and_renders_diagrams(tmp_path):
    root = build_speed.copy_project(tmp_path / "project")
    assert not (root / ".venv").exists() and not (root / ".cache").exists()
    assert (root / "snippets" / "c" / "Makefile").is_file()
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env.update(PATH="/usr/bin:/bin", SNIPPETS_DEVICE="CPU")
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (got["status"], got["problem"]) == ("ok", ""), got
    assert "cudnnCreate:" in got["stdout"] and got["rendered"]
