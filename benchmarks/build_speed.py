"""Build-speed benchmark (a script that prints figures, not a test).

Copies the project to a temporary folder with an empty cache, then prints:
  - a fresh clone's build time (the snippets that changed since their committed outputs run,
    results/outputs/: pipeline/records/outputs.py);
  - cold build time (every snippet runs: the committed outputs turned off, an empty cache);
  - warm build time (nothing changed) and its ratio to a build with execution turned off
    (target <= 1.3);
  - how many snippets re-run after touching one (target 1).
With --rebuild, it copies this checkout's cache as well (nothing to run), starts `mkdocs serve`
as `make serve` does (--no-strict --dirty), edits one line of the home page once the first build
is served, and prints the time until the served page shows the line (target: at most 5 s): what a
writer waits for (pipeline/pages/changed_pages.py: a rebuild builds the pages an edit touches).

With --serve, on a copy with an empty cache (a fresh clone), it starts `mkdocs serve` as `make
serve` does and prints the time to the home page's first answer (target: within 60 s of
the command) and to the moment no page says a snippet is still running. With --serve --clone,
the same from `make serve` typed in a fresh git clone of HEAD, its set-up (.venv, Node packages,
from the package cache) included: the figure issues #44 and #63 ask for.

    python benchmarks/build_speed.py
    python benchmarks/build_speed.py --rebuild
    python benchmarks/build_speed.py --serve
    python benchmarks/build_speed.py --serve --clone
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# At the top only: tests/site/ is the browser tests, not a build.
SKIP_AT_TOP = {".venv", ".cache", "site", "node_modules", ".git", "test-artifacts"}
SKIP = {".pytest_cache", ".hypothesis"}  # anywhere
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
    shutil.copytree(REPO, root, ignore=lambda d, names: [
        n for n in names if n in SKIP or (Path(d) == REPO and n in SKIP_AT_TOP)])
    if (REPO / "node_modules").is_dir():
        (root / "node_modules").symlink_to((REPO / "node_modules").resolve())
    return root


def rebuild_figures(port: int = 8798) -> int:
    """As a writer sees it: `mkdocs serve` as `make serve` runs it (--no-strict --dirty) on a
    copy with this checkout's cache (nothing to run), a one-line edit of a page, and the time
    until the served page shows the line."""
    with tempfile.TemporaryDirectory(prefix="build-speed-") as tmp:
        root = copy_project(Path(tmp) / "project")
        if (REPO / ".cache").is_dir():
            # Not the other releases' installed environments (gigabytes): no build reads them.
            envs = REPO / ".cache" / "versions"
            shutil.copytree(REPO / ".cache", root / ".cache", symlinks=True,
                            ignore=lambda d, names: ["envs"] if Path(d) == envs else [])
        if _get(f"http://127.0.0.1:{port}/") is not None:
            print(f"port {port} is taken: stop the server there first", file=sys.stderr)
            return 2
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "--no-strict", "--dirty",
                                 "--dev-addr", f"127.0.0.1:{port}"], cwd=root,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True,
                                env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
        try:
            first = _wait(lambda: _get(f"http://127.0.0.1:{port}/"), start, proc)
            if first is None:
                print("the server never answered", file=sys.stderr)
                return 1
            home = _final_url(f"http://127.0.0.1:{port}/")
            time.sleep(3)  # the server watches the files from shortly after its first build
            line = f"One more line, as a writer adds one ({time.time_ns()})."
            page = root / "docs" / "index.md"
            edited = time.perf_counter()
            page.write_text(page.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
            shown = _wait(lambda: line if line in (_get(home) or "") else None, edited, proc)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)
    print(f"make serve: first page answered after {first:7.1f} s")
    if shown is None:
        print("make serve: the edit never showed", file=sys.stderr)
        return 1
    print(f"make serve: a one-line page edit shows in the served page after {shown:5.1f} s  "
          f"(target <= 5 s: {'met' if shown <= 5 else 'MISSED'})")
    return 0


def _wait(found, start: float, proc, limit: float = 600) -> float | None:
    """Seconds from `start` until found() gives something, polling; None if the server stops
    or `limit` passes."""
    while time.perf_counter() - start < limit and proc.poll() is None:
        if found():
            return time.perf_counter() - start
        time.sleep(0.2)
    return None


PENDING = ("Running…", "Ejecutándose…")  # the words of a pending output (pipeline/pages/hooks/build.py)


def _final_url(url: str) -> str:
    """Where `url` lands after the server's redirects."""
    import urllib.request
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.geturl()


def _get(url: str) -> str | None:
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def serve_figures(port: int = 8799, clone: bool = False) -> int:
    """Time from `mkdocs serve` on a fresh copy to the first page, and to the last output. With
    `clone`, from `make serve` typed in a fresh `git clone` of this checkout's HEAD: its own
    .venv and node_modules set up first, from the package cache (port 8000, as make serve)."""
    with tempfile.TemporaryDirectory(prefix="build-speed-") as tmp:
        if clone:
            root, port = Path(tmp) / "clone", 8000
            subprocess.run(["git", "clone", "-q", str(REPO), str(root)], check=True)
            command = ["make", "serve"]
        else:
            root = copy_project(Path(tmp) / "project")
            command = [sys.executable, "-m", "mkdocs", "serve", "--no-strict", "--dirty",
                       "--dev-addr", f"127.0.0.1:{port}"]
        what = "make serve on a fresh clone" if clone else "mkdocs serve on a fresh copy"
        if _get(f"http://127.0.0.1:{port}/") is not None:
            print(f"port {port} is taken: stop the server there first", file=sys.stderr)
            return 2
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
        first = last = None
        pages: list[str] = []
        try:
            while time.perf_counter() - start < 3600 and proc.poll() is None:
                home = _get(f"http://127.0.0.1:{port}/")
                if home is not None and first is None:
                    first = time.perf_counter() - start
                    # The server sends / on to site_url's path (/cudnn-rnn-guide/): the pages
                    # are under it.
                    base = _final_url(f"http://127.0.0.1:{port}/")
                    pages = [base + p for p in
                             ("", "criteria/", "troubleshooting/", "benchmarks/", "es/")]
                    print(f"{what}: first page answered after {first:7.1f} s  "
                          f"(target <= 60 s: {'met' if first <= 60 else 'MISSED'})", flush=True)
                if first is not None:
                    texts = [_get(p) or PENDING[0] for p in pages]
                    if not any(w in t for t in texts for w in PENDING):
                        last = time.perf_counter() - start
                        break
                time.sleep(2)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)  # make and the server it started
            proc.wait(timeout=60)
    if last is None:
        print(f"{what}: outputs still running when the benchmark gave up", file=sys.stderr)
        return 1
    print(f"{what}: last output filled in after {last:7.1f} s")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--rebuild"]:
        return rebuild_figures()
    if sys.argv[1:] == ["--serve"]:
        return serve_figures()
    if sys.argv[1:] == ["--serve", "--clone"]:
        return serve_figures(clone=True)
    if sys.argv[1:]:
        print("usage: python benchmarks/build_speed.py [--rebuild | --serve [--clone]]",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="build-speed-") as tmp:
        root = copy_project(Path(tmp) / "project")
        fresh, fresh_n = build(root)
        shutil.rmtree(root / ".cache")
        cold, cold_n = build(root, SNIPPETS_COMMITTED="0")
        warm, warm_n = build(root)
        off, _ = build(root, SNIPPETS_EXECUTE="0")
        snippet = root / "snippets" / TOUCHED
        snippet.write_text(snippet.read_text() + "\n# touched by build_speed.py\n")
        _, touched_n = build(root)
    print(f"fresh clone's build   {fresh:7.1f} s  ({fresh_n} snippets executed, the others "
          "from their committed outputs)")
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
