"""Browser runs committed under results/browser/: what a page's visit (visits.py) or a language's
pasted messages (searching.pasted) collected in Chromium, with the key of everything that decided
it, so that a fresh clone makes again only the runs whose inputs changed, as committed outputs do
for snippets (pipeline/records/outputs.py). The checks always assert on the data: what is taken
from here is the browser's measurement, never a verdict.

    results/browser/<run>.json   {"key", "requested", "provenance", "data"}; the address the
                                 site was served at is stored as @ORIGIN@

The key hashes: each file of the built site the run asked for (its requests, as the Tab records
them: the page, its styles and scripts, the blocks and charts it loaded, a page it went on to),
the files the caller names (the search index), the test code that drives the browser, the
caller's other inputs (the queries pasted), and the browser and what draws the page: Chromium's
release, Playwright's, numpy's and Pillow's, and the fonts fontconfig lists. A run is taken
from here only when that key is the same now; otherwise it is made again, and written here
(the callers leave out a run in which a step raised, a pasted message's results came late or
found nothing, or the search worker failed a query: those are asked again in the next run).

Each session also makes again about one run in SAMPLE_ONE_IN, chosen by the commit, whatever its
key says: a key that misses an input is found by a run that disagrees with its committed data.
`BROWSER_COMMITTED=0` makes every run again.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
import warnings
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from conftest import REPO

STORE = REPO / "results" / "browser"
SAMPLE_ONE_IN = 25
TESTS = REPO / "tests"
# The code that drives the browser in every committed run (each caller adds its own module).
DRIVERS = (TESTS / "chromium.py", TESTS / "site" / "browsing.py")


def enabled() -> bool:
    return os.environ.get("BROWSER_COMMITTED", "1") != "0"


@functools.cache
def _fonts() -> str:
    try:
        listed = subprocess.run(["fc-list", "--format", "%{file} %{fontversion} %{style}\n"],
                                capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        listed = "no fc-list"
    return hashlib.sha256("\n".join(sorted(listed.splitlines())).encode()).hexdigest()


@functools.cache
def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _machine() -> str:
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in
                   Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.machine()
    return f"{cpu} ({os.cpu_count()} cores)"


def sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def sampled(name: str) -> bool:
    """Whether this session makes the run again whatever its key says (one in SAMPLE_ONE_IN,
    by the commit: the same in every worker of a session, another set at the next commit)."""
    digest = hashlib.sha256(f"{_commit()}:{name}".encode()).hexdigest()
    return int(digest[:8], 16) % SAMPLE_ONE_IN == 0


# This process's committed runs: "taken", and those made again by why (conftest.py sums the
# workers' and prints them at the end of the session).
RUNS: dict[str, list[str]] = {"taken": []}


def _why_made(name: str) -> str | None:
    if not enabled():
        return "BROWSER_COMMITTED=0"
    if sampled(name):
        return "this commit's sample"
    return None


def summary(runs: dict[str, list[str]]) -> str:
    """One line: how many runs were taken from results/browser/, how many made and why. Each
    run once: a page's visits are asked for by every worker whose modules read them."""
    runs = {why: set(names) for why, names in runs.items()}
    made = [f"{len(names)} {why}" for why, names in sorted(runs.items()) if why != "taken" and names]
    return (f"browser runs: {len(runs.get('taken', set()))} taken from {STORE.relative_to(REPO)}/ "
            f"(same key), {sum(len(v) for k, v in runs.items() if k != 'taken')} made"
            + (f" ({', '.join(made)})" if made else ""))


def requested_files(urls: list[str], origin: str) -> list[str]:
    """The site's files a run asked for, relative to the site's folder."""
    files = set()
    for url in urls:
        if not url.startswith(origin + "/"):
            continue  # data:, blob:, another host (the run's data says so: a problem)
        path = unquote(urlsplit(url).path).lstrip("/")
        files.add(path + "index.html" if path == "" or path.endswith("/") else path)
    return sorted(files)


@functools.cache
def for_site(site_root: Path, chromium_version: str, origin: str) -> "Browser":
    """The session's committed runs for this built site, served at `origin`, and this Chromium
    (its files hashed once)."""
    return Browser(site_root, chromium_version, origin)


# What a run's data holds in place of the address it was served at (a free port, another each
# session): a run taken from here reads the current one.
ORIGIN = "@ORIGIN@"


def _shape(data):
    """The data with every number (a position, a size: they vary from one load of a page to the
    next) made 0, for telling a run made again from its committed one."""
    if isinstance(data, dict):
        return {k: _shape(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_shape(v) for v in data]
    return 0 if isinstance(data, (int, float)) and not isinstance(data, bool) else data


class Browser:
    """The committed runs of one session, for one built site and one Chromium."""

    def __init__(self, site_root: Path, chromium_version: str, origin: str):
        self.site_root = site_root
        self.chromium = chromium_version
        self.origin = origin
        self._files: dict[str, str | None] = {}

    def _site_file(self, rel: str) -> str | None:
        if rel not in self._files:
            self._files[rel] = sha(self.site_root / rel)
        return self._files[rel]

    def key(self, driver: Path, files: list[str], inputs) -> str | None:
        """The key of a run that asked for `files` (None if one of them is gone)."""
        hashes = {rel: self._site_file(rel) for rel in files}
        if None in hashes.values():
            return None
        what = {"files": hashes, "inputs": inputs, "chromium": self.chromium,
                "code": {p.relative_to(REPO).as_posix(): sha(p) for p in (*DRIVERS, driver)},
                "packages": {n: metadata.version(n) for n in ("playwright", "numpy", "pillow")},
                "fonts": _fonts()}
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()

    def taken(self, name: str, driver: Path, inputs=None):
        """The committed data of run `name` when its key is the same now (and it is not this
        session's sample); None otherwise: the caller makes the run and keeps it."""
        why = _why_made(name)
        if why is None:
            try:
                kept = self._read(STORE / f"{name}.json")
                if kept["key"] == self.key(driver, kept["requested"], inputs):
                    RUNS["taken"].append(name)
                    return kept["data"]
                why = "its inputs changed"
            except (OSError, ValueError, KeyError, TypeError):
                why = "none committed"
        RUNS.setdefault(why, []).append(name)
        return None

    def run(self, name: str, driver: Path, make, inputs=None):
        """Run `name`: its committed data when taken(); otherwise make() -> (data, the site's
        files it asked for, whether to keep it), written here when it says so."""
        data = self.taken(name, driver, inputs)
        if data is None:
            data, files, keep = make()
            if keep:
                self.keep(name, driver, files, data, inputs)
        return data

    def _read(self, file: Path) -> dict:
        return json.loads(file.read_text(encoding="utf-8").replace(ORIGIN, self.origin))

    def keep(self, name: str, driver: Path, files: list[str], data, inputs=None) -> None:
        """Write a run just made, with its key (atomically: a reader never sees half a file)."""
        key = self.key(driver, files, inputs)
        if key is None:
            return
        record = {"key": key, "requested": files, "provenance": {
            "chromium": self.chromium, "machine": _machine(),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}, "data": data}
        target = STORE / f"{name}.json"
        data = json.loads(json.dumps(data))  # as it reads back
        try:
            old = self._read(target)
        except (OSError, ValueError):
            old = {}
        if old.get("key") == key and old.get("data") == data:
            return  # the same run again: the committed file stays as it is (no new date)
        if old.get("key") == key and _shape(old.get("data")) != _shape(data):
            # a sample made again: the same inputs gave other data (an input the key misses,
            # or a measurement that varies), past its numbers; the checks asserted on the new data
            warnings.warn(f"{target.relative_to(REPO)}: made again with the same key, its data "
                          f"differ from the committed run's: {_first_difference(old['data'], data)}")
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(f".{target.name}.{os.getpid()}.part")
        text = json.dumps(record, sort_keys=True, separators=(",", ":")).replace(self.origin, ORIGIN)
        part.write_text(text + "\n", encoding="utf-8")
        part.replace(target)


def _first_difference(a, b, where: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{where}/{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    return f"{where or '/'}: {str(a)[:80]!r} then {str(b)[:80]!r}"
