"""Read, from the published packages, what each release changed in a library's recurrent-layer
code, and write it as data. Run by hand at dev time (it needs the network; the build and the
tests do not):

    python -m pipeline.claims.release_changes_gen --mirror keras=/path/to/keras.git \\
        --mirror tf-keras=/path/to/tf-keras.git --mirror jax=/path/to/jax.git

For every release of each library in RANGES (PyPI's list, pre-releases and yanked ones left
out), it reads the recurrent-layer files (pipeline/claims/release_files.py) out of the wheel on
PyPI: only the zip's directory and those files, by HTTP range requests (a PyTorch wheel weighs
500 MB; its two RNN files a few hundred KB). Then:

- data/release_files.yml: each release's files and their content hashes (what the tests re-hash
  against whatever releases are installed here);
- data/release_changes.yml: one row per pair of consecutive releases whose files differ, with
  each changed file's diff summary (lines added and removed, the functions the hunks sit in) and
  the pull requests the repository's history names for it (`git log --cherry-pick` between the
  two release tags, on those files, in a local clone given with --mirror). What a person wrote
  into a row (kind, symptom, message, note) is kept when the row's pair is still there.

Downloaded wheels' files are cached under /tmp/release-changes/ (--cache).
"""
from __future__ import annotations

import argparse
import difflib
import io
import json
import re
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import yaml
from packaging.version import Version

from pipeline.claims import release_files
from pipeline.running.files import write_atomic
from pipeline.running import yaml_load

ROOT = release_files.ROOT
FILES_DATA = ROOT / "data" / "release_files.yml"
CHANGES_DATA = ROOT / "data" / "release_changes.yml"
# The releases read, first and last included (issue #59: the version matrix's span).
RANGES = {"keras": ("3.0.0", "3.15.1"), "tf-keras": ("2.14.0", "2.21.0"),
          "pytorch": ("2.13.0", "2.15.0"), "jax": ("0.4.23", "0.10.2")}
# Where each library's release tag and files live in its repository.
TAGS = {"keras": "v{v}", "tf-keras": "v{v}", "pytorch": "v{v}", "jax": "jax-v{v}"}
# (git pathspecs: the files the wheel's are built from, before and after Keras moved its code
# under keras/src/, tests left out)
REPO_PATHS = {"keras": (":(glob)keras/src/layers/rnn/*.py", ":(glob)keras/layers/rnn/*.py",
                        ":(glob)keras/src/backend/*/rnn.py", ":(glob)keras/backend/*/rnn.py",
                        ":(exclude,glob)**/*_test.py"),
              "tf-keras": (":(glob)tf_keras/layers/rnn/*.py", ":(glob)tf_keras/src/layers/rnn/*.py",
                           ":(exclude,glob)**/*_test.py"),
              "pytorch": ("torch/nn/modules/rnn.py", "torch/nn/utils/rnn.py"),
              "jax": ("jax/experimental/rnn.py",)}
HUNK = re.compile(r"^@@ [^@]+ @@ ?(.*)$")
DEF = re.compile(r"^\s*(?:async\s+)?(def|class)\s+(\w+)")
PR = re.compile(r"\(#(\d+)\)\s*$")


class RangeFile(io.RawIOBase):
    """A remote file read by HTTP range requests, so zipfile reads only what it needs."""

    def __init__(self, url: str, size: int):
        self.url, self.size, self.pos = url, size, 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, offset, whence=0):
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def readinto(self, buffer):
        if self.pos >= self.size:
            return 0
        end = min(self.size, self.pos + len(buffer)) - 1
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end}"})
        with urllib.request.urlopen(request, timeout=120) as response:
            data = response.read()
        buffer[:len(data)] = data
        self.pos += len(data)
        return len(data)


def pypi_releases(library: str) -> list[tuple[str, dict]]:
    """(release, wheel) for each release in RANGES: a pure-Python wheel, else CPython 3.11's
    manylinux x86_64 one (its Python files are those of every platform's wheel)."""
    dist = release_files.LIBRARIES[library]["distribution"]
    with urllib.request.urlopen(f"https://pypi.org/pypi/{dist}/json", timeout=60) as r:
        info = json.load(r)
    lo, hi = map(Version, RANGES[library])
    out = []
    for v, files in info["releases"].items():
        version = Version(v)
        if version.is_prerelease or not lo <= version <= hi:
            continue
        wheels = [f for f in files if f["filename"].endswith(".whl") and not f.get("yanked")]
        pick = next((f for f in wheels if f["filename"].endswith("-none-any.whl")), None) or next(
            (f for f in wheels if "cp311" in f["filename"] and "manylinux" in f["filename"]
             and "x86_64" in f["filename"]), None)
        if pick:
            out.append((v, pick))
    return sorted(out, key=lambda x: Version(x[0]))


def wheel_url(f: dict) -> str:
    return re.sub(r"^(?:\.\./)+packages/", "https://files.pythonhosted.org/", f["url"])


def read_wheel(library: str, version: str, wheel: dict, cache: Path) -> dict[str, bytes]:
    """{file: bytes} of the release's recurrent-layer code, cached under `cache`."""
    folder = cache / library / version
    index = folder / ".files.json"
    if index.is_file():
        return {n: (folder / n).read_bytes() for n in json.loads(index.read_text())}
    local = cache / "wheels" / wheel["filename"]
    source = local.open("rb") if local.is_file() else io.BufferedReader(
        RangeFile(wheel_url(wheel), wheel["size"]), buffer_size=1 << 16)
    out = {}
    with source, zipfile.ZipFile(source) as z:
        for name in z.namelist():
            rel = release_files.selected(library, name)
            if rel:
                out[rel] = z.read(name)
    for rel, data in out.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    index.write_text(json.dumps(sorted(out)))
    return out


def summary(old: bytes | None, new: bytes | None) -> str:
    """`+A -R` lines, and the functions and classes the changed lines sit in."""
    if old is None:
        return "added"
    if new is None:
        return "removed"
    a = old.decode("utf-8", "replace").splitlines()
    b = new.decode("utf-8", "replace").splitlines()
    added = removed = 0
    where: list[str] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(0):
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                continue
            removed += i2 - i1
            added += j2 - j1
            for name in _enclosing(b, j1) or _enclosing(a, i1):
                if name not in where:
                    where.append(name)
    text = f"+{added} -{removed}"
    return text + (": " + ", ".join(where[:6]) + (" …" if len(where) > 6 else "")
                   if where else "")


def _enclosing(lines: list[str], at: int) -> list[str]:
    """The def or class the line `at` sits in (the nearest one above it, by indentation)."""
    for i in range(min(at, len(lines) - 1), -1, -1):
        m = DEF.match(lines[i])
        if m:
            return [m.group(2)]
    return []


def pull_requests(library: str, mirror: Path | None, olds: list[str],
                  new: str) -> list[dict] | None:
    """The pull requests that `git log` names between the two tags on the files; None when the
    mirror or the tags are missing. `olds`: the old release and the releases before it with the
    same files, newest first: the first one tagged stands for it (tf-keras has no tag for 2.15.1,
    whose files are those of 2.15.0)."""
    if mirror is None:
        return None
    git = ["git", "--git-dir", str(mirror)]

    def tagged(v: str) -> str | None:
        tag = TAGS[library].format(v=v)
        missing = subprocess.run(git + ["rev-parse", "-q", "--verify", tag + "^{commit}"],
                                 capture_output=True).returncode
        return None if missing else tag

    tags = [next((t for t in map(tagged, olds) if t), None), tagged(new)]
    if None in tags:
        return None
    log = subprocess.run(git + ["log", "--cherry-pick", "--right-only", "--no-merges",
                                "--format=%H%x09%cs%x09%s", f"{tags[0]}...{tags[1]}", "--",
                                *REPO_PATHS[library]], capture_output=True, text=True, check=True)
    out, seen = [], set()
    repo = release_files.LIBRARIES[library]["repo"]
    for line in log.stdout.splitlines():
        sha, date, subject = line.split("\t", 2)
        m = PR.search(subject)
        key = m.group(1) if m else sha
        if key in seen:
            continue
        seen.add(key)
        url = (f"https://github.com/{repo}/pull/{m.group(1)}" if m
               else f"https://github.com/{repo}/commit/{sha}")
        out.append({"url": url, "title": PR.sub("", subject).strip(), "date": date})
    return out


class _NoAliases(yaml.SafeDumper):
    """Each row written out in full, never as a reference to an identical one."""

    def ignore_aliases(self, data):
        return True


HAND = ("kind", "symptom", "message", "what", "bugs", "issue", "run")


def generate(mirrors: dict[str, Path], cache: Path, only: list[str]) -> None:
    files_data = yaml_load.load(FILES_DATA.read_text()) if FILES_DATA.is_file() else {}
    changes = yaml_load.load(CHANGES_DATA.read_text()) if CHANGES_DATA.is_file() else {}
    files_data = {k: v for k, v in (files_data or {}).items() if k in release_files.LIBRARIES}
    for library in only:
        releases = pypi_releases(library)
        read = {}
        for version, wheel in releases:
            print(f"{library} {version}", file=sys.stderr)
            read[version] = read_wheel(library, version, wheel, cache)
        files_data[library] = {v: {n: release_files.digest(b) for n, b in sorted(f.items())}
                               for v, f in read.items()}
        before = {(r["from"], r["to"]): r for r in (changes or {}).get(library) or []}
        rows = []
        versions = [v for v, _ in releases]
        for old, new in zip(versions, versions[1:]):
            names = sorted(set(read[old]) | set(read[new]))
            changed = {n: summary(read[old].get(n), read[new].get(n)) for n in names
                       if read[old].get(n) != read[new].get(n)}
            if not changed:
                continue
            row = {"from": old, "to": new, "files": changed}
            same = [v for v in reversed(versions[:versions.index(old) + 1])]
            same = same[:next((i for i, v in enumerate(same) if read[v] != read[old]), len(same))]
            prs = pull_requests(library, mirrors.get(library), same, new)
            row["prs"] = prs if prs is not None else []
            if mirrors.get(library) is None:
                row["prs_none"] = "the repository's history was not read"
            elif prs is None:
                row["prs_none"] = "no release tag for both releases in the repository's history"
            elif not prs:
                row["prs_none"] = "no commit between the two release tags touches these files"
            for key in HAND:
                if key in before.get((old, new), {}):
                    row[key] = before[(old, new)][key]
            rows.append(row)
        changes[library] = rows
    head_files = ("# Generated by pipeline/claims/release_changes_gen.py from the wheels on PyPI:\n"
                  "# each release's recurrent-layer files and the first 16 hex digits of their\n"
                  "# sha256. Do not edit; run the generator.\n")
    write_atomic(FILES_DATA, head_files + yaml.dump(files_data, Dumper=_NoAliases,
                                                    sort_keys=False, width=100))
    old_head = CHANGES_DATA.read_text().split("\n\n", 1)[0] + "\n\n" if CHANGES_DATA.is_file() \
        else "# What changed, release by release (pipeline/claims/release_changes.py).\n\n"
    write_atomic(CHANGES_DATA, old_head + yaml.dump(changes, Dumper=_NoAliases, sort_keys=False,
                                                    width=100, allow_unicode=True))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", action="append", default=[], metavar="LIBRARY=GIT_DIR")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/release-changes"))
    parser.add_argument("--only", nargs="*", default=list(RANGES), choices=list(RANGES))
    args = parser.parse_args(argv)
    mirrors = {}
    for item in args.mirror:
        library, _, path = item.partition("=")
        if library not in RANGES or not Path(path).is_dir():
            print(f"--mirror {item}: expected LIBRARY=GIT_DIR, LIBRARY one of {', '.join(RANGES)}",
                  file=sys.stderr)
            return 2
        mirrors[library] = Path(path)
    generate(mirrors, args.cache, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
