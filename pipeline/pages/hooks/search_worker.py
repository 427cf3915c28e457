"""Material's search worker with the site's fixes: `assets/javascripts/workers/
search.lunr-fix.<hash>.min.js`, Material's worker between pipeline/pages/hooks/search_worker_prelude.js (how a
query reaches it) and pipeline/pages/hooks/search_worker_fixes.js (fixes to lunr; what and why: each file's
comments). overrides/main.html names it instead of Material's worker in every page's `__config`;
the name carries a hash of the content, so a browser never keeps an older copy.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

# MkDocs loads a hook as a lone file: make the `pipeline` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from pipeline.running.files import write_atomic  # noqa: E402

WORKERS = "assets/javascripts/workers"
PRELUDE = Path(__file__).with_name("search_worker_prelude.js")
FIX = Path(__file__).with_name("search_worker_fixes.js")


def material_worker(config) -> Path:
    """The search worker of the theme (the first theme folder that has one: Material's)."""
    for folder in config.theme.dirs:
        found = sorted((Path(folder) / WORKERS).glob("search.*.min.js"))
        if found:
            return found[0]
    raise PluginError(f"no search worker under {WORKERS}/ in the theme's folders")


def fixed_worker(config) -> tuple[str, bytes]:
    source = material_worker(config)
    content = (PRELUDE.read_bytes().rstrip(b"\n") + b"\n" + source.read_bytes().rstrip(b"\n")
               + b"\n" + FIX.read_bytes())
    return f"{WORKERS}/search.lunr-fix.{hashlib.sha256(content).hexdigest()[:8]}.min.js", content


def on_config(config):
    """What overrides/main.html swaps: Material's worker for the fixed one (both site-relative)."""
    fixed, _ = fixed_worker(config)
    config.extra["search_worker"] = {"material": f"{WORKERS}/{material_worker(config).name}",
                                     "fixed": fixed}
    return config


def on_post_build(config):
    path, content = fixed_worker(config)
    write_atomic(Path(config.site_dir) / path, content.decode("utf-8"))
