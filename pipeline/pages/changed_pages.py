"""Under `make serve`, the pages an edit touches, so that a rebuild builds those and no others.

`make serve` runs `mkdocs serve --dirty`: MkDocs then reads and builds only the pages whose
File.is_modified() says so (pipeline/pages/hooks/changed_pages.py sets it from here). A page is
touched when

- its own source changed;
- a snippet it names (its path, or its name in a marker such as `<!-- gpu-chart: NAME -->`)
  changed or has a new outcome: edited, pending, or ended in the background
  (pipeline/running/background.py);
- it is the troubleshooting index and a troubleshooting page of its language changed (the index
  lists their entries, pipeline/pages/troubleshooting_pages.py);
- anything the whole site reads changed (SITE_WIDE: mkdocs.yml, overrides/, pipeline/, data/,
  results/): then every page is.

What a dirty rebuild does not follow, and a full build does (`make build`, or `make serve`
started again): another page's title in the navigation, a link to where another page shows a
helper in full, and a page removed (its search entries stay until then). The search index keeps
the entries of the pages not rebuilt (SearchEntries), so search finds every page while serving.
"""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from pipeline.pages import troubleshooting_pages

SITE_WIDE = ("mkdocs.yml", "overrides", "pipeline", "data", "results")
# Under SITE_WIDE, but read by no page: the browser tests' committed runs (tests/site/committed.py).
NOT_READ = ("results/browser",)
_WORD = re.compile(r"[\w./-]+")


def tree_state(root: Path, names=SITE_WIDE) -> str:
    """A digest of the name, size and modification time of every file under `names`."""
    h = hashlib.sha256()
    for name in names:
        top = root / name
        paths = [top] if top.is_file() else sorted(
            Path(d) / f for d, dirs, files in os.walk(top)
            if "__pycache__" not in Path(d).parts
            and not any(Path(d).is_relative_to(root / n) for n in NOT_READ) for f in files)
        for path in paths:
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            h.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def named_snippets(text: str, snippets: list[str]) -> list[str]:
    """The snippets (paths under snippets/) a page's source names: by path, by path without
    `.py`, or by file name without `.py` (a chart marker names its benchmark so)."""
    words = set(_WORD.findall(text))
    return [rel for rel in snippets
            if rel in words or rel.removesuffix(".py") in words
            or Path(rel).stem in words]


class Changes:
    """Each page's digest at its last build, kept for the life of the `make serve` process."""

    def __init__(self):
        self.built: dict[str, str] = {}

    def touched(self, root: Path, docs: Path, pages: list[str],
                outcomes: dict[str, str]) -> set[str]:
        """The pages (paths under docs/) to build now. `outcomes`: each snippet's outcome as a
        token that changes when its result does."""
        site = tree_state(root)
        troubleshooting = {}
        touched = set()
        for uri in pages:
            text = (docs / uri).read_text(encoding="utf-8", errors="replace")
            parts = [site, text] + [f"{rel}\0{outcomes[rel]}"
                                    for rel in named_snippets(text, sorted(outcomes))]
            if troubleshooting_pages.MARKER.search(text):
                folder = (docs / uri).parent
                if folder not in troubleshooting:
                    troubleshooting[folder] = tree_state(folder, sorted(
                        p.name for p in folder.glob("*.md")))
                parts.append(troubleshooting[folder])
            digest = hashlib.sha256("\0\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
            if self.built.get(uri) != digest:
                touched.add(uri)
            self.built[uri] = digest
        return touched


class SearchEntries:
    """The search index's documents of every page, kept across dirty rebuilds: a rebuild's index
    holds the pages it built, and the others keep the documents of their last build."""

    def __init__(self):
        self.by_page: dict[str, list[dict]] = {}

    def merge(self, docs: list[dict]) -> list[dict]:
        """The rebuilt pages' documents, and every other page's from its last build. A document
        comes once: mkdocs-static-i18n (1.3.1) hands a dirty build's documents of the first
        language twice (its non-dirty builds remove the copies)."""
        rebuilt: dict[str, list[dict]] = {}
        seen = set()
        for doc in docs:
            key = (doc.get("location", ""), doc.get("title", ""), doc.get("text", ""))
            if key in seen:
                continue
            seen.add(key)
            rebuilt.setdefault(key[0].split("#", 1)[0], []).append(doc)
        self.by_page.update(rebuilt)
        return [doc for page in self.by_page.values() for doc in page]


# One of each for the `make serve` process: MkDocs loads its hooks again at every rebuild, and
# modules imported from them stay loaded.
CHANGES = Changes()
SEARCH = SearchEntries()
