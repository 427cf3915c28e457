"""Build-speed benchmark (a script that prints figures, not a test).

Copies the project to a temporary folder with an empty cache, then prints:
  - cold build time (every snippet runs);
  - warm build time (nothing changed) and its ratio to a build with execution turned off
    (target <= 1.3);
  - how many snippets re-run after touching one (target 1).

    python benchmarks/build_speed.py
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKIP = {".venv", ".cache", "site", "node_modules", ".git", ".pytest_cache", ".hypothesis",
        "test-artifacts"}
TOUCHED = "environment/versions.py"


def build(root: Path, **env) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d",
                           str(root / "site")], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **env})
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"build failed:\n{proc.stderr[-3000:]}")
    executed = sum(int(n) for n in re.findall(r"snippets: (\d+) executed", proc.stderr))
    return seconds, executed


def copy_project(root: Path) -> Path:
    """The project as a fresh clone has it (no .venv, no cache), plus this checkout's Node
    packages, linked: the build runs Node's libraries from ROOT/node_modules, and copying them
    would time the copy. The C programs find cuDNN's wheels through the Python running the build
    (the runner passes it to make), so the copy needs no .venv of its own."""
    shutil.copytree(REPO, root, ignore=lambda d, names: [n for n in names if n in SKIP])
    if (REPO / "node_modules").is_dir():
        (root / "node_modules").symlink_to((REPO / "node_modules").resolve())
    return root


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="build-speed-") as tmp:
        root = copy_project(Path(tmp) / "project")
        cold, cold_n = build(root)
        warm, warm_n = build(root)
        off, _ = build(root, SNIPPETS_EXECUTE="0")
        snippet = root / "snippets" / TOUCHED
        snippet.write_text(snippet.read_text() + "\n# touched by build_speed.py\n")
        _, touched_n = build(root)
    print(f"cold build            {cold:7.1f} s  ({cold_n} snippets executed)")
    print(f"warm build            {warm:7.1f} s  ({warm_n} executed)")
    print(f"execution turned off  {off:7.1f} s")
    ratio = warm / off
    print(f"warm / no-execution   {ratio:7.2f}    (target <= 1.3: {'met' if ratio <= 1.3 else 'MISSED'})")
    print(f"re-run after touching {TOUCHED}: {touched_n} (target 1: "
          f"{'met' if touched_n == 1 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
