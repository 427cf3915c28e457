"""Add someone's GPU records to results/, checked before anything lands there.

    python -m pipeline.add_records ARCHIVE.tar.gz      # make add-records FILE=ARCHIVE.tar.gz
    python -m pipeline.add_records --results DIR ARCHIVE.tar.gz   # into DIR instead of results/

The archive is a gzip-compressed tar whose single top folder is one machine's folder as
`make gpu-run` leaves it under results/ (machine.json, snippets/<path>/result.json and data/):

    tar -czf MACHINE.tar.gz -C results MACHINE

Checked, in this order, with nothing written under results/ until all of it passes:
- the archive: gzip, then tar; its size, unpacked size, number of members, each file's size
  (declared sizes before anything is extracted; the gzip stream is read with a limit);
- names: one top folder named as `records.machine_slug` names machines; below it only plain
  files and folders (no links, no devices) with plain names (letters, digits, `_.+-`, not
  starting with a dot: no `..`, no absolute path), at most MAX_DEPTH deep; extraction then goes
  through tarfile's own `data` filter as well;
- the records: records.py's checks (fields, provenance, data files against their hashes);
  each names a snippet of this checkout (one made for an older version of it is added and
  reported as such, as pages label it); no file that belongs to no record; no markup in what
  pages show outside a code block (provenance, machine.json, dates);
- no duplicate: the same machine, snippet and finished_at, or the same record already under
  results/ in any machine's folder.
A GPU run's logs (MACHINE/logs/: each program's output, the GPU tests') pass the archive's
checks like any member and are left out of results/: they are read from the archive.
A bad archive: one line on stderr, exit code 2, results/ unchanged. A good one: the machine's
folder is built in a hidden folder under results/ (the same file system) and renamed into
place; a machine already there keeps its other records, and a record of the same snippet is
replaced by the archive's.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import zlib
from datetime import datetime
from pathlib import Path, PurePosixPath

from pipeline.records import store as records
from pipeline.running import runner
from pipeline.running.snippets import SnippetError

MAX_ARCHIVE = 50 * 2**20  # the .tar.gz itself
MAX_FILE = 20 * 2**20  # one file, unpacked
MAX_TOTAL = 100 * 2**20  # all files, unpacked
MAX_MEMBERS = 5000
MAX_DEPTH = 12  # folders below the machine's folder, the file included
TAR_OVERHEAD = 1024 * (MAX_MEMBERS + 10)  # tar headers and padding, beyond the files' bytes
NAME_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")
# Outside stdout/stderr (shown in code blocks, escaped), what a record says is put into page
# text: no HTML, no Markdown link or code, no control characters.
MARKUP = re.compile(r"[<>\[\]`\x00-\x1f\x7f]")
SHOWN_AS_CODE = {"stdout", "stderr"}
# A GPU run's logs (each program's output, the GPU tests'), packed beside its records for the
# developer who brings the archive back: checked as every member is, never added to results/.
LOGS_DIR = "logs"


class BadArchive(Exception):
    """What is wrong with the archive, in one line."""


def _gunzip(archive: Path, out: Path) -> None:
    """The tar inside `archive`, into `out`, reading at most what the limits allow."""
    limit = MAX_TOTAL + TAR_OVERHEAD
    written = 0
    try:
        with gzip.open(archive, "rb") as src, open(out, "wb") as dst:
            while chunk := src.read(1 << 20):
                written += len(chunk)
                if written > limit:
                    raise BadArchive(f"unpacks to more than {limit // 2**20} MiB")
                dst.write(chunk)
    except (OSError, EOFError, zlib.error) as e:
        raise BadArchive(f"not a .tar.gz archive (gzip: {e})") from None


def _member_name(m: tarfile.TarInfo) -> PurePosixPath | None:
    """The member's path, checked; None for the archive's own "." entry."""
    name = m.name
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or "\\" in name:
        raise BadArchive(f"{name!r}: an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts:
        if m.isdir():
            return None
        raise BadArchive(f"{name!r}: a member without a name")
    if ".." in parts:
        raise BadArchive(f"{name!r}: a path with '..'")
    odd = next((p for p in parts if not NAME_PART.fullmatch(p)), None)
    if odd is not None:
        raise BadArchive(f"{name!r}: odd characters or a hidden name in {odd!r} "
                         "(letters, digits and _.+- only, not starting with a dot)")
    if len(parts) > MAX_DEPTH + 1:
        raise BadArchive(f"{name!r}: deeper than {MAX_DEPTH} folders")
    return PurePosixPath(*parts)


def _members(tar: tarfile.TarFile) -> tuple[str, list[tarfile.TarInfo]]:
    """The machine's folder name and the members to extract, every header checked first."""
    chosen: list[tarfile.TarInfo] = []
    seen: set[PurePosixPath] = set()
    tops: set[str] = set()
    total = 0
    count = 0
    while True:
        try:
            m = tar.next()
        except tarfile.TarError as e:
            raise BadArchive(f"not a valid tar archive ({e})") from None
        if m is None:
            break
        count += 1
        if count > MAX_MEMBERS:
            raise BadArchive(f"more than {MAX_MEMBERS} members")
        if m.issym() or m.islnk():
            raise BadArchive(f"{m.name!r}: a link (links are not allowed)")
        if not (m.isreg() or m.isdir()) or m.issparse():
            raise BadArchive(f"{m.name!r}: a device or special file (only files and folders)")
        path = _member_name(m)
        if path is None:
            continue
        if m.isreg():
            if m.size > MAX_FILE:
                raise BadArchive(f"{m.name!r}: {m.size} bytes, over the {MAX_FILE // 2**20} MiB "
                                 "a file may have")
            total += m.size
            if total > MAX_TOTAL:
                raise BadArchive(f"files over {MAX_TOTAL // 2**20} MiB in all")
            if len(path.parts) == 1:
                raise BadArchive(f"{m.name!r}: a file outside the machine's folder")
        if path in seen:
            raise BadArchive(f"{m.name!r}: in the archive twice")
        seen.add(path)
        tops.add(path.parts[0])
        chosen.append(m)
    if not chosen:
        raise BadArchive("the archive is empty")
    if len(tops) != 1:
        raise BadArchive(f"{len(tops)} top folders ({', '.join(sorted(tops)[:3])}); the archive "
                         "holds one machine's folder")
    slug = tops.pop()
    try:
        ok = records.machine_slug(slug) == slug
    except records.RecordError:
        ok = False
    if not ok:
        raise BadArchive(f"{slug!r}: not a machine folder name (lower-case letters, digits, -)")
    return slug, chosen


def _no_markup(value, where: str) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _no_markup(k, where)
            _no_markup(v, f"{where}.{k}")
    elif isinstance(value, list):
        for v in value:
            _no_markup(v, where)
    elif isinstance(value, str) and MARKUP.search(value):
        raise BadArchive(f"{where}: markup or control characters ({value[:40]!r}); pages show "
                         "this as text")


def _shown(info: dict) -> dict:
    """machine.json less the free text that pages never show: why a snippet or a GPU test
    failed (an error's first line), the names of the GPU tests."""
    info = json.loads(json.dumps(info))
    run = info.get("run")
    if isinstance(run, dict):
        if isinstance(run.get("failed"), dict):
            run["failed"] = {k: "" for k in run["failed"]}
        tests = run.get("gpu_tests")
        if isinstance(tests, dict):
            for key in ("failed", "skipped"):
                if isinstance(tests.get(key), (dict, list)):
                    tests[key] = len(tests[key])
    return info


def _check_records(folder: Path, slug: str, hashes: dict[str, str]) -> records.Machine:
    """The unpacked machine folder, through records.py's own checks and the ones for a record
    from elsewhere."""
    try:
        machine, = records.load_all(folder.parent, Path(os.devnull))
    except records.RecordError as e:
        raise BadArchive(str(e).replace(str(folder.parent) + os.sep, "")) from None
    if not machine.records:
        raise BadArchive(f"{slug}: no records (snippets/<path>/result.json)")
    _no_markup(_shown(machine.data), f"{slug}/machine.json")
    expected = {folder / records.MACHINE_FILE}
    for r in machine.records:
        where = f"{slug}/{records.SNIPPETS_DIR}/{r.snippet}"
        _no_markup({k: v for k, v in r.data.items() if k not in SHOWN_AS_CODE},
                   f"{where}/{records.RESULT_FILE}")
        try:
            datetime.fromisoformat(r.data["finished_at"])
        except ValueError:
            raise BadArchive(f"{where}: finished_at {r.data['finished_at']!r} is not a date "
                             "and time") from None
        if r.snippet not in hashes:
            raise BadArchive(f"{where}: no snippet {r.snippet!r} in this checkout")
        r.stale = hashes[r.snippet] != r.data["source_hash"]
        expected.add(r.path / records.RESULT_FILE)
        expected.update(r.data_dir / name for name in r.data["data_files"])
    extra = sorted(p.relative_to(folder.parent).as_posix() for p in folder.rglob("*")
                   if p.is_file() and p not in expected)
    if extra:
        raise BadArchive(f"{extra[0]}: belongs to no record")
    return machine


def _same(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _no_duplicates(new: records.Machine, results: Path, snippets: Path) -> set[str]:
    """Refuses a record already under results/ (the same machine, snippet and finished_at, or
    the same record in any machine's folder). One exception: a record its own machine's folder
    holds unchanged, in an archive that also brings a new one (a run of some snippets on a
    machine carries that machine's earlier records): those snippets are returned."""
    try:
        old = records.load_all(results, snippets)
    except records.RecordError as e:
        raise BadArchive(f"results/ is damaged already: {e}") from None
    unchanged = set()
    for r in new.records:
        for m in old:
            for o in m.records:
                if (m.slug == new.slug and o.snippet == r.snippet
                        and o.data["finished_at"] == r.data["finished_at"]):
                    if not _same(o.data, r.data):
                        raise BadArchive(f"{r.snippet}: results/{m.slug} already has a record "
                                         f"of this run (finished {o.data['finished_at']}) that "
                                         "differs from the archive's")
                    unchanged.add(r.snippet)
                elif _same(o.data, r.data):
                    raise BadArchive(f"{r.snippet}: the same record is already under "
                                     f"results/{m.slug}")
    if new.records and len(unchanged) == len(new.records):
        r = new.records[0]
        raise BadArchive(f"{r.snippet}: results/{new.slug} already has this record (finished "
                         f"{r.data['finished_at']}), as it has every record of the archive")
    return unchanged


def pack(folder: Path, archive: Path, logs: Path | None = None) -> Path:
    """One machine's folder as the archive `add` takes (tar -czf ARCHIVE -C results MACHINE),
    with the run's `logs` folder as MACHINE/logs/ when given, written atomically: no hidden
    leftover of an interrupted write, no user names."""
    def plain(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if any(part.startswith(".") for part in PurePosixPath(member.name).parts):
            return None
        member.uid = member.gid = 0
        member.uname = member.gname = ""
        return member

    archive = Path(archive)
    archive.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{archive.name}.", dir=archive.parent)
    try:
        with os.fdopen(fd, "wb") as f, tarfile.open(fileobj=f, mode="w:gz") as tar:
            tar.add(folder, arcname=Path(folder).name, filter=plain)
            if logs is not None and Path(logs).is_dir():
                tar.add(logs, arcname=f"{Path(folder).name}/{LOGS_DIR}", filter=plain)
        os.chmod(tmp, 0o644)
        os.replace(tmp, archive)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return archive


def add(archive: Path, root: Path, results: Path | None = None,
        allow_dry_run: bool = False) -> list[str]:
    """Check `archive` and add its machine's records under `results` (default ROOT/results);
    the lines to print. Raises BadArchive, with results/ as it was. A dry run's archive
    (machine.json says "dry_run": quick CPU snippets that test the notebook and the run, not
    figures) is refused unless `allow_dry_run` (a test of the dry run, into its own folder)."""
    archive = Path(archive)
    if not archive.is_file():
        raise BadArchive("no such file")
    if archive.stat().st_size > MAX_ARCHIVE:
        raise BadArchive(f"{archive.stat().st_size} bytes, over the {MAX_ARCHIVE // 2**20} MiB an "
                         "archive may have")
    project = runner.Project(root)
    try:
        hashes = records.current_hashes(project.snippets)
    except SnippetError as e:
        raise BadArchive(f"this checkout's snippets: {e}") from None
    results = Path(results) if results is not None else project.root / "results"
    if results.exists() and not results.is_dir():
        raise BadArchive(f"--results {results} is not a folder")
    made = not results.exists()
    results.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".add-records.", dir=results))  # same file system
    try:
        _gunzip(archive, work / "archive.tar")
        if not (work / "archive.tar").stat().st_size:
            raise BadArchive("the archive is empty")
        try:
            tar = tarfile.open(work / "archive.tar", "r:")
        except tarfile.TarError as e:
            raise BadArchive(f"not a .tar.gz archive (tar: {e})") from None
        with tar:
            slug, members = _members(tar)
            unpacked = work / "unpacked"
            unpacked.mkdir()
            try:
                tar.extractall(unpacked, members=members, filter="data")
            except (tarfile.TarError, OSError) as e:
                raise BadArchive(f"cannot unpack: {e}") from None
        (work / "archive.tar").unlink()
        logs = unpacked / slug / LOGS_DIR
        logged = sorted(p for p in logs.rglob("*") if p.is_file()) if logs.is_dir() else []
        shutil.rmtree(logs, ignore_errors=True)  # read from the archive, never committed
        new = _check_records(unpacked / slug, slug, hashes)
        if (new.data.get("run") or {}).get("dry_run") and not allow_dry_run:
            raise BadArchive("a dry run (machine.json says \"dry_run\": true): its records test "
                             "the notebook and the run, they are not figures for results/")
        unchanged = _no_duplicates(new, results, project.snippets)
        shown = "results" if results == project.root / "results" else str(results)
        lines = _move_into_place(new, unpacked / slug, results, work, shown, unchanged)
        if logged:
            lines.append(f"the run's logs ({len(logged)} files) stay in the archive, not in "
                         f"{shown}/: tar -xzf {archive.name} {slug}/{LOGS_DIR}")
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        if made:
            shutil.rmtree(results, ignore_errors=True)
        raise
    shutil.rmtree(work, ignore_errors=True)
    return lines


def _move_into_place(new: records.Machine, folder: Path, results: Path, work: Path,
                     shown: str = "results", unchanged: set[str] = frozenset()) -> list[str]:
    """The machine's folder under results/, in one rename (two when it was there before: the old
    one aside, the merged one in)."""
    final = results / new.slug
    replaced: set[str] = set()
    if final.exists():  # keep the machine's other records; the archive's replace the same ones
        merged = work / "merged"
        shutil.copytree(final, merged, symlinks=True)
        for r in new.records:
            target = merged / records.SNIPPETS_DIR / r.snippet
            if target.exists():
                replaced.add(r.snippet)
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(r.path, target)
        os.replace(folder / records.MACHINE_FILE, merged / records.MACHINE_FILE)
        aside = work / "previous"
        os.rename(final, aside)
        try:
            os.rename(merged, final)
        except BaseException:
            os.rename(aside, final)
            raise
    else:
        os.rename(folder, final)
    lines = [f"added to {shown}/{new.slug}/ ({new.data['provenance']['machine']}): "
             f"{len(new.records)} record{'s' * (len(new.records) != 1)}"]
    for r in sorted(new.records, key=lambda r: r.snippet):
        notes = [r.data["finished_at"]]
        if r.stale:
            notes.append("made by an older version of the snippet: pages label it so")
        if r.snippet in unchanged:
            notes.append("there already, unchanged")
        elif r.snippet in replaced:
            notes.append("replaces the record that was there")
        lines.append(f"  {r.snippet} ({'; '.join(notes)})")
    return lines


USAGE = ("usage: make add-records FILE=ARCHIVE.tar.gz  (python -m pipeline.add_records "
         "[--results DIR] [--allow-dry-run] ARCHIVE.tar.gz): one machine's folder of records, "
         "as `make gpu-run` leaves it under results/")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line, exit 2
        print(f"{USAGE}; {message}", file=sys.stderr)
        sys.exit(2)


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(prog="python -m pipeline.add_records", usage=USAGE.removeprefix("usage: "),
                 description="Check an archive of one machine's records (its folder, as "
                             "`make gpu-run` leaves it under results/) and add it.")
    ap.add_argument("archive", type=Path, help="the .tar.gz archive")
    ap.add_argument("--results", type=Path, help="where to add it (default: results/)")
    ap.add_argument("--allow-dry-run", action="store_true",
                    help="accept a dry run's archive (to test the dry run; never for results/)")
    args = ap.parse_args(argv)
    try:
        lines = add(args.archive, Path("."), args.results, allow_dry_run=args.allow_dry_run)
    except BadArchive as e:
        print(f"add_records: {args.archive}: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
