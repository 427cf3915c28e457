"""Render at build time what would otherwise run in the reader's browser.

Mermaid and MathJax in the browser cost the diagram and notebook pages their speed (seconds of
JavaScript on a phone). Instead, the build hands the work to maintained JavaScript libraries in
Node (static_render.mjs, packages pinned in package-lock.json): Graphviz (@viz-js/viz) draws
diagrams, MathJax typesets TeX to SVG, PurgeCSS drops the CSS rules a page never uses. The pages
then carry plain SVG and CSS, and load no script for them.

Results are cached under .cache/static-render/, keyed by a hash of the request, the Node script
and package-lock.json; an entry is written atomically and re-rendered when it does not parse.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from pipeline.running.files import write_atomic

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_suffix(".mjs")
CACHE = ROOT / ".cache" / "static-render"
TIMEOUT = 120  # seconds; a render takes under one


class StaticRenderError(Exception):
    """A render failed: the message is one line that says why."""


def _key(request: dict) -> str:
    digest = hashlib.sha256()
    for part in (SCRIPT.read_bytes(), (ROOT / "package-lock.json").read_bytes(),
                 json.dumps(request, sort_keys=True).encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # missing or corrupted: render again


def render(request: dict) -> dict:
    """Run static_render.mjs on `request` ({"dot": [...]}, {"math": [...]}, {"purge": {...}})
    and return its answer, from the cache when the same request was rendered before."""
    entry = CACHE / f"{_key(request)}.json"
    answer = _load(entry)
    if answer is not None:
        return answer
    node = shutil.which("node")
    if node is None:
        raise StaticRenderError("node not found: install Node.js (Debian: apt install nodejs npm)")
    if not (ROOT / "node_modules" / ".package-lock.json").is_file():
        raise StaticRenderError("node_modules is missing: run `make build` (it runs npm ci)")
    try:
        done = subprocess.run([node, str(SCRIPT)], input=json.dumps(request), cwd=ROOT,
                              capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise StaticRenderError(f"static_render.mjs took more than {TIMEOUT} s") from None
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()
        raise StaticRenderError(why[-1] if why else f"static_render.mjs exited {done.returncode}")
    answer = json.loads(done.stdout)
    write_atomic(entry, json.dumps(answer))
    return answer
