"""`make add-records FILE=...` (pipeline/records/add_records.py): an archive of records from anyone is
checked before anything lands under results/. Hostile archives are built here, byte by byte
with tarfile; the good one is a machine folder written by records.py's own writer, as a GPU
run leaves it, and, so that writer and checker do not vouch for each other alone, a record
committed from a real run, checked against the fields CONTRIBUTING lists. Each bad one must give
one line on stderr, exit code 2 and results/ unchanged."""
from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import REPO
from pipeline.records import add_records, store as records
from pipeline.running import runner
from pipeline.running.snippets import discover

SLUG = "test-card"
PROVENANCE = {"machine": "GPU: Test Card", "gpu_name": "Test Card", "driver": "555.42",
              "packages": {"torch": "9.9.9"}, "python": "3.12.3", "date": "2026-01-02T03:04:05+00:00"}


# --- a project, a machine folder as gpu_run writes it, archives ----------------------------------

@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    (root / "snippets" / "g").mkdir(parents=True)
    (root / "snippets" / "g" / "ok.py").write_text("print('hello from the card')\n")
    (root / "snippets" / "g" / "two.py").write_text("print('second')\n")
    return root


def _cache_entry(where: Path, rel: str, stdout: str, finished_at: str,
                 data: dict[str, bytes] | None = None) -> Path:
    """A run cache entry (result.json and data/) as pipeline/running/runner.py leaves one."""
    data = data if data is not None else {"demo.json": b'{"x": 1}'}
    (where / "data").mkdir(parents=True)
    for name, body in data.items():
        (where / "data" / name).write_bytes(body)
    (where / "result.json").write_text(json.dumps({
        "snippet": rel, "status": "ok", "stdout": stdout, "stderr": "", "returncode": 0,
        "seconds": 1.5, "finished_at": finished_at, "device": "GPU: Test Card",
        "data_files": {n: records._sha256(b) for n, b in data.items()}}))
    return where


def machine_folder(project: Path, out: Path, rels=("g/ok.py",), stdout="hello from the card\n",
                   finished_at="2026-01-02T03:04:05+00:00", provenance=None,
                   slug=SLUG) -> Path:
    """out/<slug>/ written by records.write and records.write_machine, as a GPU run does."""
    provenance = provenance or dict(PROVENANCE)
    snippets = {s.rel: s for s in discover(project / "snippets")}
    for i, rel in enumerate(rels):
        entry = _cache_entry(out.parent / f"cache-{out.name}-{slug}-{i}", rel, stdout, finished_at)
        records.write(out, slug, entry, records.source_hash(snippets[rel], project / "snippets"),
                      provenance)
    records.write_machine(out, slug, {"provenance": provenance,
                                      "run": {"recorded": list(rels), "skipped": {},
                                              "failed": {}, "started_at": finished_at,
                                              "finished_at": finished_at}})
    return out / slug


def pack_folder(folder: Path, archive: Path, arcname: str | None = None) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=arcname or folder.name)
    return archive


def pack(archive: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    """A .tar.gz of hand-made members (headers as given, whatever they claim)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for info, body in members:
            tar.addfile(info, io.BytesIO(body) if body is not None else None)
    archive.write_bytes(gzip.compress(buf.getvalue()))
    return archive


def member(name: str, body: bytes = b"", kind=tarfile.REGTYPE, **attrs):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(body) if kind == tarfile.REGTYPE else 0
    for k, v in attrs.items():
        setattr(info, k, v)
    return info, (body if kind == tarfile.REGTYPE else None)


def good_members(project: Path, tmp_path: Path) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    """The members of a good archive, to spoil one at a time."""
    folder = machine_folder(project, tmp_path / "made")
    return [member(p.relative_to(folder.parent).as_posix(), p.read_bytes())
            for p in sorted(folder.rglob("*")) if p.is_file()]


def snapshot(root: Path) -> dict[str, bytes]:
    results = root / "results"
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(results.rglob("*"))} if results.exists() else {"absent": b""}


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.add_records", *args], cwd=root,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def refused(root: Path, archive: Path, says: str) -> None:
    """One line on stderr naming the problem, exit code 2, results/ exactly as it was."""
    before = snapshot(root)
    proc = cli(root, str(archive))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert says in lines[0], lines[0]
    assert snapshot(root) == before


# --- a good archive ----------------------------------------------------------------------------

def test_a_good_archive_is_added_and_read_back_as_records_of_the_checkout(project, tmp_path):
    folder = machine_folder(project, tmp_path / "made", rels=("g/ok.py", "g/two.py"))
    archive = pack_folder(folder, tmp_path / "test-card.tar.gz")
    proc = cli(project, str(archive))
    assert proc.returncode == 0, proc.stderr
    assert "added to results/test-card/ (GPU: Test Card): 2 records" in proc.stdout
    assert "  g/ok.py (2026-01-02T03:04:05+00:00)" in proc.stdout
    assert "older version" not in proc.stdout
    machine, = records.load_all(project / "results", project / "snippets")
    assert machine.slug == SLUG and sorted(r.snippet for r in machine.records) == ["g/ok.py",
                                                                                    "g/two.py"]
    assert not any(r.stale for r in machine.records)
    assert (machine.records[0].data_dir / "demo.json").read_bytes() == b'{"x": 1}'
    assert [p.name for p in (project / "results").iterdir()] == [SLUG]  # no work folder left
    # The same archive again is a duplicate; results/ stays as the first one left it.
    refused(project, archive, "already has this record")


def test_a_later_archive_of_the_machine_may_carry_its_earlier_records_unchanged(project,
                                                                                tmp_path):
    """A run of some snippets on a machine that has records (gpu_run --only) packs the whole
    folder: what is there unchanged is kept, the new record added; an earlier record that
    differs under the same run's time is refused."""
    first = machine_folder(project, tmp_path / "first", rels=("g/ok.py",))
    assert cli(project, str(pack_folder(first, tmp_path / "first.tar.gz"))).returncode == 0
    later = tmp_path / "later" / SLUG
    shutil.copytree(first, later)
    machine_folder(project, tmp_path / "later", rels=("g/two.py",),
                   finished_at="2026-01-03T00:00:00+00:00")
    proc = cli(project, str(pack_folder(later, tmp_path / "later.tar.gz")))
    assert proc.returncode == 0, proc.stderr
    assert "g/ok.py (2026-01-02T03:04:05+00:00; there already, unchanged)" in proc.stdout
    assert "g/two.py (2026-01-03T00:00:00+00:00)" in proc.stdout
    machine, = records.load_all(project / "results", project / "snippets")
    assert sorted(r.snippet for r in machine.records) == ["g/ok.py", "g/two.py"]
    # The first record altered, under the same finished_at: not the record that is there.
    altered = tmp_path / "altered" / SLUG
    shutil.copytree(later, altered)
    result = altered / "snippets" / "g" / "ok.py" / "result.json"
    result.write_text(result.read_text().replace("hello from the card", "hello from elsewhere"))
    machine_folder(project, tmp_path / "altered", rels=("g/two.py",),
                   finished_at="2026-01-04T00:00:00+00:00")
    refused(project, pack_folder(altered, tmp_path / "altered.tar.gz"), "that differs")


# A record's fields, as CONTRIBUTING ("GPU records") lists them: written out by hand here, not
# read from pipeline/records/store.py, which both writes records and checks them.
RECORD_FIELDS = {"snippet": str, "status": str, "stdout": str, "stderr": str, "returncode": int,
                 "seconds": (int, float), "finished_at": str, "device": str, "data_files": dict,
                 "source_hash": str, "provenance": dict}
# ... and, in a record of a Python snippet made since records kept it, the program it ran as.
RECORD_OPTIONAL = {"program": str, "program_sha256": str}


def test_records_of_a_real_run_have_the_documented_fields_and_are_added(tmp_path):
    """Bytes that no code of this test wrote: a record committed from a real run (the version
    matrix under results/versions/ uses the one record format, as GPU runs do),
    packed as a machine folder. Its fields are checked against the list above, its data files
    against SHA-256 computed here, and add_records takes it into an empty folder."""
    import hashlib
    from datetime import datetime
    cell = sorted(p for p in (REPO / "results" / "versions").iterdir() if p.is_dir())[0]
    results = list(cell.rglob("result.json"))
    assert results, cell
    for path in results:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert set(RECORD_FIELDS) <= set(data) <= set(RECORD_FIELDS) | set(RECORD_OPTIONAL), \
            set(data) ^ set(RECORD_FIELDS)
        for field, kind in {**RECORD_FIELDS, **RECORD_OPTIONAL}.items():
            if field in data:
                assert isinstance(data[field], kind), (field, data[field])
        if "program" in data:  # the file name the program was saved and run under
            assert data["program"] == Path(data["snippet"]).name and \
                len(data["program_sha256"]) == 64
        assert data["status"] == "ok" and data["returncode"] == 0
        assert path.parent == cell / "snippets" / data["snippet"]
        assert len(data["source_hash"]) == 64 and int(data["source_hash"], 16) >= 0
        assert datetime.fromisoformat(data["finished_at"]).tzinfo is not None
        for name, digest in data["data_files"].items():
            assert hashlib.sha256((path.parent / "data" / name).read_bytes()).hexdigest() == digest
        assert {"machine", "python", "date", "packages"} <= set(data["provenance"])
    machine = json.loads((cell / "machine.json").read_text(encoding="utf-8"))
    assert machine["provenance"]["machine"] == data["provenance"]["machine"]
    # A machine folder's name has no dots: the cell's files under a plain name, unchanged.
    archive = tmp_path / "real-run.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(cell, arcname="real-run")
    proc = cli(REPO, "--results", str(tmp_path / "results"), str(archive))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"added to {tmp_path / 'results'}/real-run/ "), proc.stdout
    (added,) = records.load_all(tmp_path / "results", REPO / "snippets")
    assert len(added.records) == len(results)


def test_a_record_of_an_older_snippet_is_added_and_said_to_be_so(project, tmp_path):
    folder = machine_folder(project, tmp_path / "made")
    archive = pack_folder(folder, tmp_path / "a.tar.gz")
    (project / "snippets" / "g" / "ok.py").write_text("print('changed since')\n")
    proc = cli(project, str(archive))
    assert proc.returncode == 0, proc.stderr
    assert "g/ok.py (2026-01-02T03:04:05+00:00; made by an older version of the snippet" \
        in proc.stdout
    rec, = records.load_all(project / "results", project / "snippets")[0].records
    assert rec.stale  # as the pages will label it


def test_a_later_run_of_a_machine_on_record_joins_its_other_records(project, tmp_path):
    first = machine_folder(project, tmp_path / "one", rels=("g/ok.py", "g/two.py"))
    assert cli(project, str(pack_folder(first, tmp_path / "1.tar.gz"))).returncode == 0
    later = machine_folder(project, tmp_path / "two", finished_at="2026-02-03T00:00:00+00:00",
                           stdout="a later run\n")
    proc = cli(project, str(pack_folder(later, tmp_path / "2.tar.gz")))
    assert proc.returncode == 0, proc.stderr
    assert "replaces the record that was there" in proc.stdout
    recs = {r.snippet: r for r in records.load_all(project / "results",
                                                   project / "snippets")[0].records}
    assert recs["g/ok.py"].data["stdout"] == "a later run\n"
    assert recs["g/two.py"].data["stdout"] == "hello from the card\n"  # kept


def test_the_same_record_under_another_machine_name_is_a_duplicate(project, tmp_path):
    folder = machine_folder(project, tmp_path / "made")
    assert cli(project, str(pack_folder(folder, tmp_path / "a.tar.gz"))).returncode == 0
    refused(project, pack_folder(folder, tmp_path / "b.tar.gz", arcname="other-card"),
            "the same record is already under results/test-card")


# --- hostile and broken archives ----------------------------------------------------------------

def test_usage_without_a_file(project):
    proc = cli(project)
    assert proc.returncode == 2 and proc.stderr.startswith("usage: make add-records FILE=")
    assert not (project / "results").exists()


@pytest.mark.parametrize("name,says", [
    ("../evil.json", "a path with '..'"),
    ("test-card/../../evil.json", "a path with '..'"),
    ("/etc/evil.json", "an absolute path"),
    ("test-card/snippets/g/ok.py/data/<b>.json", "odd characters"),
    ("test-card/snippets/g/ok.py/.hidden", "odd characters or a hidden name"),
    ("test-card/" + "d/" * 20 + "deep.json", "deeper than"),
    ("evil.json", "a file outside the machine's folder"),
    ("other-machine/machine.json", "2 top folders"),
])
def test_names_outside_the_machine_folder_or_odd_are_refused(project, tmp_path, name, says):
    members = good_members(project, tmp_path) + [member(name, b"{}")]
    refused(project, pack(tmp_path / "bad.tar.gz", members), says)
    assert not (tmp_path / "evil.json").exists() and not (project / "evil.json").exists()


@pytest.mark.parametrize("kind,attrs,says", [
    (tarfile.SYMTYPE, {"linkname": "/etc/passwd"}, "a link"),
    (tarfile.LNKTYPE, {"linkname": "test-card/machine.json"}, "a link"),
    (tarfile.CHRTYPE, {"devmajor": 1, "devminor": 3}, "a device or special file"),
    (tarfile.BLKTYPE, {"devmajor": 8, "devminor": 0}, "a device or special file"),
    (tarfile.FIFOTYPE, {}, "a device or special file"),
    (tarfile.GNUTYPE_SPARSE, {}, "a device or special file"),
])
def test_links_and_devices_are_refused(project, tmp_path, kind, attrs, says):
    members = good_members(project, tmp_path)
    members.append(member("test-card/snippets/g/ok.py/data/x.json", kind=kind, **attrs))
    refused(project, pack(tmp_path / "bad.tar.gz", members), says)


def test_a_huge_declared_size_is_refused_before_anything_is_read(project, tmp_path):
    # The header claims 30 GiB; the bytes are not there. Only the header is read.
    info, _ = member("test-card/snippets/g/ok.py/data/huge.bin")
    info.size = 30 * 2**30
    buf = io.BytesIO()
    buf.write(info.tobuf(format=tarfile.GNU_FORMAT))
    buf.write(b"\0" * 1024)
    archive = tmp_path / "bomb.tar.gz"
    archive.write_bytes(gzip.compress(buf.getvalue()))
    refused(project, archive, "over the 20 MiB a file may have")


def test_a_gzip_bomb_is_stopped_while_unpacking(project, tmp_path, monkeypatch):
    # 200 MiB of zeros compress to about 200 KiB: reading stops at the limit, not at the end.
    archive = tmp_path / "zeros.tar.gz"
    with gzip.open(archive, "wb", compresslevel=1) as f:
        chunk = b"\0" * 2**20
        for _ in range(add_records.MAX_TOTAL // 2**20 + 10):
            f.write(chunk)
    assert archive.stat().st_size < 2**20
    refused(project, archive, "unpacks to more than")


def test_too_many_members_and_too_much_in_all_are_refused(project, tmp_path, monkeypatch):
    members = good_members(project, tmp_path)
    many = members + [member(f"test-card/snippets/g/ok.py/data/f{i}.json", b"{}")
                      for i in range(add_records.MAX_MEMBERS)]
    refused(project, pack(tmp_path / "many.tar.gz", many), f"more than {add_records.MAX_MEMBERS} members")
    # Each file under the cap, together over it (checked in-process: the caps made small).
    monkeypatch.setattr(add_records, "MAX_FILE", 600)
    monkeypatch.setattr(add_records, "MAX_TOTAL", 1000)
    big = members + [member(f"test-card/snippets/g/ok.py/data/b{i}.json", b"x" * 500)
                     for i in range(3)]
    with pytest.raises(add_records.BadArchive, match="files over 0 MiB in all"):
        add_records.add(pack(tmp_path / "big.tar.gz", big), project)
    assert not (project / "results").exists()


def test_not_a_tar_an_empty_archive_and_no_file(project, tmp_path):
    text = tmp_path / "notes.tar.gz"
    text.write_text("just some text\n")
    refused(project, text, "not a .tar.gz archive")
    plain = tmp_path / "plain.tar.gz"
    plain.write_bytes(gzip.compress(b"not a tar at all" * 100))
    refused(project, plain, "not a .tar.gz archive")
    empty = tmp_path / "empty.tar.gz"
    empty.write_bytes(b"")
    refused(project, empty, "the archive is empty")
    refused(project, pack(tmp_path / "no-members.tar.gz", []), "the archive is empty")
    refused(project, tmp_path / "missing.tar.gz", "no such file")


def _replace(members, name: str, body: bytes):
    return [member(name, body) if info.name == name else (info, b) for info, b in members]


RESULT = "test-card/snippets/g/ok.py/result.json"


def test_bad_json_a_hash_mismatch_and_a_stray_file_are_refused(project, tmp_path):
    members = good_members(project, tmp_path)
    refused(project, pack(tmp_path / "json.tar.gz", _replace(members, RESULT, b"{not json")),
            "not readable JSON")
    refused(project, pack(tmp_path / "hash.tar.gz",
                          _replace(members, "test-card/snippets/g/ok.py/data/demo.json",
                                   b'{"x": 2}')),
            "data/demo.json does not match its hash")
    refused(project, pack(tmp_path / "stray.tar.gz",
                          members + [member("test-card/notes.txt", b"hi")]),
            "test-card/notes.txt: belongs to no record")
    refused(project, pack(tmp_path / "none.tar.gz",
                          [m for m in members if m[0].name.endswith("machine.json")]),
            "no records")
    refused(project, pack(tmp_path / "nomachine.tar.gz",
                          [m for m in members if not m[0].name.endswith("machine.json")]),
            "no machine.json")


def test_a_record_of_no_snippet_of_this_checkout_is_refused(project, tmp_path):
    folder = machine_folder(project, tmp_path / "made")
    (project / "snippets" / "g" / "ok.py").unlink()
    refused(project, pack_folder(folder, tmp_path / "a.tar.gz"), "no snippet 'g/ok.py' in this checkout")


@pytest.mark.parametrize("field,value", [
    ("machine", "GPU: <script>alert(1)</script>"),
    ("gpu_name", "[card](javascript:alert(1))"),
    ("driver", "555\n!!! danger"),
])
def test_markup_in_what_pages_show_as_text_is_refused(project, tmp_path, field, value):
    folder = machine_folder(project, tmp_path / "made", provenance={**PROVENANCE, field: value})
    refused(project, pack_folder(folder, tmp_path / "a.tar.gz"), "markup or control characters")


def test_a_failure_half_way_leaves_nothing(project, tmp_path, monkeypatch):
    """The last step (the rename into results/) fails: no machine folder, no work folder."""
    folder = machine_folder(project, tmp_path / "made")
    archive = pack_folder(folder, tmp_path / "a.tar.gz")
    (project / "results").mkdir()
    real = os.rename

    def failing(src, dst):
        if Path(dst).name == SLUG:
            raise OSError("disk full (simulated)")
        return real(src, dst)
    monkeypatch.setattr(add_records.os, "rename", failing)
    with pytest.raises(OSError):
        add_records.add(archive, project)
    assert list((project / "results").iterdir()) == []


# --- what a record can put on a page ------------------------------------------------------------

def test_markup_in_a_records_output_is_shown_as_text_on_the_built_page(tmp_path, mini):
    """A record added from an archive, whose output is HTML and script, built into a page by
    the real hook: the page shows the text, and holds no element it tried to add."""
    mini.snippet("g/ok.py", "# snippet: needs=gpu\nimport sys\nprint('needs a GPU: none')\n"
                            "sys.exit(77)\n")
    hostile = ('<script>alert("x")</script>\n<img src=x onerror=alert(1)>\n'
               '<b class="injected">bold</b>\n```\n</code></pre><i class="injected">i</i>\n')
    folder = machine_folder(mini.root, tmp_path / "made", stdout=hostile)
    proc = cli(mini.root, str(pack_folder(folder, tmp_path / "a.tar.gz")))
    assert proc.returncode == 0, proc.stderr
    (mini.root / "docs" / "index.md").write_text("# Mini\n\n<!-- gpu-result: g/ok.py -->\n\n"
                                                 "<!-- machines-on-record -->\n")
    build = mini.build(env={"SNIPPETS_DEVICE": "CPU"})
    assert build.returncode == 0, build.stderr
    page = (mini.root / "site" / "index.html").read_text()
    assert "Recorded on GPU: Test Card" in page  # the record is on the page
    elements = Elements()
    elements.feed(page)
    assert not any(dict(attrs).get("class") == "injected" for _, attrs in elements.tags)
    assert not any(tag == "img" or "onerror" in dict(attrs) for tag, attrs in elements.tags)
    assert not any("alert" in text for text in elements.scripts)  # the theme's own scripts only
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page \
        or "&lt;script&gt;alert(\"x\")&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


class Elements(HTMLParser):
    """Every element of a page as a browser's parser sees it, and the text of its scripts."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, list]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
