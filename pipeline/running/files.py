"""Writing files so that a reader never sees half of one."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename: another
    process sees the old file or the new one, never a partial one (and no temporary file stays
    behind when writing fails)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    umask = os.umask(0)  # mkstemp makes the file private (0600): give it the usual permissions
    os.umask(umask)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_named_by_content(site: Path, files: dict[str, str]) -> None:
    """Write each {path under site: text} a page names. Each file is named by its content (a
    hash in its name), so one already there is the same file and is left as it is: pages that
    share it write it once."""
    for path, text in files.items():
        target = site / path
        if not target.is_file():
            write_atomic(target, text)
