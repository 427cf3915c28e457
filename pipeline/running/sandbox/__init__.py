"""A snippet writes only inside its own work folder (the runner's cwd for it, holding
SNIPPET_DATA_DIR). Two guards:

- Python snippets, and Python processes they start, load `sitecustomize.py` from this folder,
  an audit hook that refuses a write outside and logs its path (`outside_writes`).
- C snippets (make, the program) are not Python: the runner compares the project tree before
  and after (`snapshot`). Only for them, because the Python runs take minutes, during which
  an author saving a page would be blamed.

HOME, TMPDIR and the caches libraries write to point into the work folder, so that TensorFlow,
Keras, PyTorch and matplotlib write there. Every file here is part of the cache key.

The empty home gets a copy of this user's matplotlib font list, as a reader's machine has one
after matplotlib's first use: `import keras` imports matplotlib, which otherwise scans the
machine's fonts again in every snippet (a second of CPU each, 109 snippets).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

DIR = Path(__file__).resolve().parent
LOG = ".outside-writes"  # in the work folder, one refused path per line
# Not the site's sources: build output, caches, tools' own folders.
NOT_WATCHED = {".cache", "site", ".venv", "node_modules", ".git", "test-artifacts",
               "__pycache__", ".pytest_cache", ".hypothesis"}


def files() -> list[Path]:
    return sorted(DIR.glob("*.py"))


def matplotlib_cache() -> Path:
    """Where matplotlib keeps this user's font list, by its own rule on Linux: MPLCONFIGDIR,
    else XDG_CACHE_HOME/matplotlib, else ~/.cache/matplotlib."""
    if os.environ.get("MPLCONFIGDIR"):
        return Path(os.environ["MPLCONFIGDIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matplotlib"


def font_lists() -> list[Path]:
    return sorted(matplotlib_cache().glob("fontlist-*.json"))


def prepare_font_list(python: str) -> None:
    """Build this user's font list once, as matplotlib's first use does, with the Python the
    snippets run on (the file's name carries matplotlib's version). Nothing when it is there,
    or when that Python has no matplotlib."""
    if not font_lists():
        subprocess.run([python, "-c", "import matplotlib.font_manager"], capture_output=True,
                       timeout=300)


def environment(work: Path, base: dict) -> dict:
    """The snippet's environment: `base`, with the guard on and home and caches in `work`."""
    home, tmp = work / "home", work / "tmp"
    home.mkdir()
    tmp.mkdir()
    mplconfig = home / ".config" / "matplotlib"
    mplconfig.mkdir(parents=True)
    for found in font_lists():  # read by matplotlib, rewritten in the work folder if stale
        shutil.copyfile(found, mplconfig / found.name)
    # The CUDA driver's JIT cache (native, outside every tree the site has) stays where it was:
    # in the work folder it would be thrown away, and every GPU run would compile again.
    cuda_cache = base.get("CUDA_CACHE_PATH") or str(Path.home() / ".nv" / "ComputeCache")
    return dict(
        base,
        SNIPPET_SANDBOX=str(work), SNIPPET_SANDBOX_LOG=str(work / LOG),
        PYTHONPATH=os.pathsep.join(filter(None, [str(DIR), base.get("PYTHONPATH")])),
        HOME=str(home), TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp),
        XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"), XDG_STATE_HOME=str(home / ".local" / "state"),
        MPLCONFIGDIR=str(mplconfig), KERAS_HOME=str(home / ".keras"),
        TORCH_HOME=str(home / ".cache" / "torch"), CUDA_CACHE_PATH=cuda_cache,
    )


def outside_writes(work: Path) -> list[str]:
    """The paths the audit hook refused, read and removed from the work folder."""
    log = work / LOG
    if not log.is_file():
        return []
    paths = log.read_text(encoding="utf-8", errors="replace").splitlines()
    log.unlink()
    return list(dict.fromkeys(paths))  # in order, once each


def snapshot(root: Path) -> dict[str, tuple]:
    """Every file and folder under root (but NOT_WATCHED) with its size and mtime."""
    seen = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in NOT_WATCHED]
        for name in dirs + names:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            seen[path] = (st.st_size, st.st_mtime_ns) if name in names else ()
    return seen


def changed(before: dict, after: dict) -> list[str]:
    """Paths created, removed or modified between two snapshots."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
