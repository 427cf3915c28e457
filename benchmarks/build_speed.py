"""Build-speed benchmark (a script that prints figures, not a test).

Copies the project to a temporary folder with an empty cache, then prints:
  - cold build time (every snippet runs);
  - warm build time (nothing changed) and its ratio to a build with execution turned off
    (target <= 1.3);
  - how many snippets re-run after touching one (target 1).
With --rebuild, it copies this checkout's cache as well (nothing to run) and prints instead:
  - a build in a fresh process with execution turned off;
  - what `make serve` does after a one-line edit of one page: in one process, as MkDocs's server
    does, a first build, then the rebuild after the edit (targets: at most 15 s, and at most 1.3
    times the build with execution turned off).

With --serve, on a copy with an empty cache (a fresh clone), it starts `mkdocs serve` as `make
serve` does and prints the time to the home page's first answer (target: within 4 minutes of
the command) and to the moment no page says a snippet is still running. With --serve --clone,
the same from `make serve` typed in a fresh git clone of HEAD, its set-up (.venv, Node packages,
from the package cache) included: the figure issue #44 asks for.

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


SERVE_LIKE = r"""
import sys, time
from pathlib import Path
from mkdocs.commands.build import build
from mkdocs.config import load_config
root, page = Path(sys.argv[1]), Path(sys.argv[2])

def rebuild():
    config = load_config(config_file=str(root / "mkdocs.yml"), site_dir=str(root / "site"))
    config.plugins.on_startup(command="serve", dirty=False)
    start = time.perf_counter()
    build(config, serve_url="http://127.0.0.1:8000/", dirty=False)
    return time.perf_counter() - start

first = rebuild()
page.write_text(page.read_text() + "\nOne more line, as a writer adds one.\n")
print(f"{first:.2f} {rebuild():.2f}")
"""


def serve_rebuild(root: Path, page: str = "docs/index.md") -> tuple[float, float]:
    """(first build, rebuild after a one-line edit of `page`), in one process as `mkdocs serve`
    runs them (MkDocs reloads the configuration, not the Python modules, between the two)."""
    proc = subprocess.run([sys.executable, "-c", SERVE_LIKE, str(root), str(root / page)],
                          cwd=root, capture_output=True, text=True,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    if proc.returncode != 0:
        sys.exit(f"build failed:\n{proc.stderr[-3000:]}")
    first, again = map(float, proc.stdout.split()[-2:])
    return first, again


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


def rebuild_figures() -> int:
    with tempfile.TemporaryDirectory(prefix="build-speed-") as tmp:
        root = copy_project(Path(tmp) / "project")
        if (REPO / ".cache").is_dir():
            # Not the other releases' installed environments (gigabytes): no build reads them.
            envs = REPO / ".cache" / "versions"
            shutil.copytree(REPO / ".cache", root / ".cache", symlinks=True,
                            ignore=lambda d, names: ["envs"] if Path(d) == envs else [])
        off, executed = build(root, SNIPPETS_EXECUTE="0")
        first, again = serve_rebuild(root)
    print(f"build, execution off (fresh process) {off:7.1f} s  ({executed} executed)")
    print(f"make serve: first build              {first:7.1f} s")
    print(f"make serve: rebuild after a one-line page edit {again:7.1f} s  "
          f"(target <= 15 s: {'met' if again <= 15 else 'MISSED'}; "
          f"{again / off:.2f} x the build with execution off, target <= 1.3: "
          f"{'met' if again <= 1.3 * off else 'MISSED'})")
    return 0


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
            command = [sys.executable, "-m", "mkdocs", "serve", "--no-strict", "--dev-addr",
                       f"127.0.0.1:{port}"]
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
                          f"(target <= 240 s: {'met' if first <= 240 else 'MISSED'})", flush=True)
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
