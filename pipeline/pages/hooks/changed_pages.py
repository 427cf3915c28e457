"""`make serve` (`mkdocs serve --dirty`): a rebuild builds the pages an edit touches, not the site.

MkDocs' dirty build reads and builds the pages whose File.is_modified() is true, by default the
pages whose source is newer than their built file. That misses a page whose snippet changed or
whose output arrived in the background, and a page whose built file is newer than an edit made
during a rebuild. Here every page's is_modified() answers from pipeline/pages/changed_pages.py
instead: its source, the snippets it names and their outcomes, and what the whole site reads.

Only under `mkdocs serve --dirty`; `mkdocs build` and a plain `mkdocs serve` build every page.
"""
from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.plugins import event_priority

# MkDocs loads a hook as a lone file: make the `pipeline` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from pipeline.pages import changed_pages  # noqa: E402
from pipeline.running import runner  # noqa: E402

_state = {"dirty_serve": False}


def on_startup(command, dirty):
    _state["dirty_serve"] = command == "serve" and dirty


def dirty_serve() -> bool:
    return _state["dirty_serve"]


def _outcome_tokens(root: Path) -> dict[str, str]:
    """Each snippet's outcome in the cache, as a token that changes with its result (running
    nothing: the build hook runs or schedules what is stale)."""
    outcomes = runner.run_all(runner.Project(root), execute_stale=False)
    return {o.snippet.rel: f"{o.status}\0{o.program_sha256}\0{o.finished_at}" for o in outcomes}


@event_priority(-120)  # after every other on_files (i18n's at -100, notebooks_i18n's at -110)
def on_files(files, config):
    if not dirty_serve():
        return files
    root = Path(config["config_file_path"]).resolve().parent
    docs = Path(config["docs_dir"])
    pages = [f for f in files.documentation_pages() if (docs / f.src_uri).is_file()]
    touched = changed_pages.CHANGES.touched(root, docs, [f.src_uri for f in pages],
                                            _outcome_tokens(root))
    for f in pages:
        f.is_modified = (lambda changed: lambda: changed)(f.src_uri in touched)
    return files
