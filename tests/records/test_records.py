"""Records under results/: made from the run cache's entries, checked when read, stale as soon as
the snippet or a helper changes, and never half-written. Tiny snippets on a fake machine: no
figure here is a GPU measurement."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline.records import store as records
from pipeline.running import runner
from pipeline.running.cache import key_for
from pipeline.running.snippets import discover

pytestmark = pytest.mark.usefixtures("cpu_only")

PROVENANCE = {"machine": "GPU: Test Card", "gpu_name": "Test Card", "driver": "1.0",
              "date": "2026-01-02T03:04:05+00:00"}
BENCH = """\
import json, os, pathlib
import _helper
data = pathlib.Path(os.environ['SNIPPET_DATA_DIR'])
(data / 'demo.json').write_text(json.dumps({'value': _helper.VALUE}))
print('value', _helper.VALUE)
"""


def _run(mini):
    return {o.snippet.rel: o for o in runner.run_all(runner.Project(mini.root))}


def _record(mini, rel="t/bench.py", slug="test-card") -> Path:
    o = _run(mini)[rel]
    assert o.status == "ok", o.stderr
    snippet = next(s for s in discover(mini.root / "snippets") if s.rel == rel)
    return records.write(mini.root / "results", slug, Path(o.data_dir).parent,
                         records.source_hash(snippet, mini.root / "snippets"), PROVENANCE)


@pytest.fixture
def bench(mini):
    mini.snippet("t/_helper.py", "VALUE = 1\n")
    mini.snippet("t/bench.py", BENCH)
    return mini


def _load(mini):
    return records.load_all(mini.root / "results", mini.root / "snippets")


def test_a_record_is_the_cache_result_plus_source_hash_and_provenance(bench):
    folder = _record(bench)
    assert folder == bench.root / "results" / "test-card" / "snippets" / "t" / "bench.py"
    record = json.loads((folder / "result.json").read_text())
    cached = json.loads((Path(_run(bench)["t/bench.py"].data_dir).parent / "result.json").read_text())
    assert set(record) == set(cached) | {"source_hash", "provenance"}
    for field in ("snippet", "status", "stdout", "stderr", "returncode", "seconds",
                  "finished_at", "device", "data_files", "program", "program_sha256", "key"):
        assert record[field] == cached[field], field
    assert record["provenance"] == PROVENANCE and record["stdout"] == "value 1\n"
    assert json.loads((folder / "data" / "demo.json").read_text()) == {"value": 1}
    records.write_machine(bench.root / "results", "test-card", {"provenance": PROVENANCE})
    (machine,) = _load(bench)
    (rec,) = machine.records
    assert (rec.snippet, rec.machine, rec.date, rec.stale, rec.on_gpu) == (
        "t/bench.py", "GPU: Test Card", record["finished_at"][:10], False, False)


def test_source_hash_follows_snippet_and_helpers_but_not_requirements_device_or_clone(
        bench, tmp_path, monkeypatch):
    def hashes(root):
        s = next(s for s in discover(root / "snippets") if s.rel == "t/bench.py")
        return records.source_hash(s, root / "snippets"), s

    first, snippet = hashes(bench.root)
    assert first == hashes(bench.root)[0]
    key = key_for(snippet, [bench.root / "requirements.txt"], "CPU")
    (bench.root / "requirements.txt").write_text("nothing==2\n")
    assert key_for(snippet, [bench.root / "requirements.txt"], "CPU") != key
    assert key_for(snippet, [bench.root / "requirements.txt"], "GPU: Test Card") != key
    assert hashes(bench.root)[0] == first  # requirements and device are not part of it
    clone = tmp_path / "clone"
    shutil.copytree(bench.root, clone)
    assert hashes(clone)[0] == first  # nor where the checkout is
    bench.snippet("t/_helper.py", "VALUE = 2\n")
    assert hashes(bench.root)[0] != first
    bench.snippet("t/_helper.py", "VALUE = 1\n")
    bench.snippet("t/bench.py", BENCH + "# a comment\n")
    assert hashes(bench.root)[0] != first


def test_a_record_goes_stale_when_its_snippet_or_a_helper_changes(bench):
    _record(bench)
    records.write_machine(bench.root / "results", "test-card", {"provenance": PROVENANCE})
    assert [r.stale for r in _load(bench)[0].records] == [False]
    bench.snippet("t/_helper.py", "VALUE = 2\n")
    assert [r.stale for r in _load(bench)[0].records] == [True]
    bench.snippet("t/_helper.py", "VALUE = 1\n")
    assert [r.stale for r in _load(bench)[0].records] == [False]
    (bench.root / "snippets" / "t" / "bench.py").unlink()  # a removed snippet's record
    assert [r.stale for r in _load(bench)[0].records] == [True]


def test_writing_again_replaces_the_record_and_leaves_nothing_behind(bench):
    first = _record(bench)
    bench.snippet("t/_helper.py", "VALUE = 2\n")
    again = _record(bench)
    assert again == first and "value 2" in (again / "result.json").read_text()
    assert sorted(p.name for p in again.parent.iterdir()) == ["bench.py"]  # no temp, no old copy
    assert sorted(p.name for p in again.iterdir()) == ["data", "result.json"]


def test_only_a_success_is_recorded(bench):
    bench.snippet("t/bad.py", "raise SystemExit(3)\n")
    entry = Path(_run(bench)["t/bench.py"].data_dir).parent
    fake = bench.root / "fake-entry"
    shutil.copytree(entry, fake)
    result = json.loads((fake / "result.json").read_text())
    (fake / "result.json").write_text(json.dumps(dict(result, status="failed")))
    with pytest.raises(records.RecordError, match="only a successful run is recorded"):
        records.write(bench.root / "results", "m", fake, "0" * 64, PROVENANCE)
    assert not (bench.root / "results" / "m" / "snippets" / "t" / "bench.py").exists()


def _damage(folder: Path, how: str) -> None:
    result = folder / "result.json"
    data = json.loads(result.read_text())
    if how == "data changed":
        (folder / "data" / "demo.json").write_text('{"value": 99}')
    elif how == "extra data file":
        (folder / "data" / "more.json").write_text("{}")
    elif how == "field missing":
        del data["stdout"]
    elif how == "field mistyped":
        data["returncode"] = "0"
    elif how == "not ok":
        data["status"] = "needs-gpu"
    elif how == "other snippet":
        data["snippet"] = "t/other.py"
    elif how == "no machine in provenance":
        data["provenance"] = {"date": "2026-01-01"}
    elif how == "bad hash":
        data["source_hash"] = "abc"
    elif how == "truncated":
        result.write_text('{"snippet": ')
        return
    result.write_text(json.dumps(data))


@pytest.mark.parametrize("how, says", [
    ("data changed", "does not match its hash"), ("extra data file", "more.json"),
    ("field missing", "stdout"), ("field mistyped", "returncode"), ("not ok", "status"),
    ("other snippet", "sits in the folder of 't/bench.py'"), ("no machine in provenance", "machine"),
    ("bad hash", "source_hash"), ("truncated", "not readable JSON")])
def test_a_damaged_record_is_an_error_naming_it(bench, how, says):
    folder = _record(bench)
    records.write_machine(bench.root / "results", "test-card", {"provenance": PROVENANCE})
    _damage(folder, how)
    with pytest.raises(records.RecordError, match=says) as e:
        _load(bench)
    assert "results/test-card/snippets/t/bench.py" in str(e.value)


def test_a_machine_folder_says_what_machine_it_is(bench):
    _record(bench)
    with pytest.raises(records.RecordError, match="no machine.json"):
        _load(bench)
    records.write_machine(bench.root / "results", "test-card", {"provenance": {}})
    with pytest.raises(records.RecordError, match="does not name the machine"):
        _load(bench)


def test_a_half_written_record_is_invisible(bench):
    folder = _record(bench)
    records.write_machine(bench.root / "results", "test-card", {"provenance": PROVENANCE})
    # What a crash in the middle of write() leaves: a hidden folder beside the record.
    shutil.copytree(folder, folder.with_name(".bench.py.x1.tmp"))
    (folder.with_name(".bench.py.x1.tmp") / "result.json").write_text("{")
    assert [r.snippet for r in _load(bench)[0].records] == ["t/bench.py"]


def test_records_per_snippet_and_data_files_per_benchmark_name_the_machine(bench):
    _record(bench, slug="card-a")
    _record(bench, slug="card-b")
    for slug in ("card-a", "card-b"):
        records.write_machine(bench.root / "results", slug, {"provenance": PROVENANCE})
    bench.snippet("t/_helper.py", "VALUE = 2\n")
    _record(bench, slug="card-b")  # card-b has the current version, card-a an older one
    machines = _load(bench)
    # These ran on this CPU: no GPU result for a page to show...
    assert records.for_snippet(machines, "t/bench.py") == []
    found = records.for_snippet(machines, "t/bench.py", gpu_only=False)
    assert [(r.slug, r.stale) for r in found] == [("card-b", False), ("card-a", True)]
    assert records.for_snippet(machines, "t/none.py", gpu_only=False) == []
    # ...once made on a GPU, they are.
    for r in found:
        data = json.loads((r.path / "result.json").read_text())
        (r.path / "result.json").write_text(json.dumps(dict(data, device="GPU: Test Card")))
    assert len(records.for_snippet(_load(bench), "t/bench.py")) == 2
    files = records.data_files(machines, "demo.json")
    date = found[0].date
    assert [where for _, where in files] == [
        f"results/card-a, {date}, older version of the snippet", f"results/card-b, {date}"]
    assert records.data_files(machines, "other.json") == []


@pytest.mark.parametrize("label, slug", [("GPU: NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3"),
                                         ("My lab's A100 (40 GB)", "my-lab-s-a100-40-gb")])
def test_machine_slug(label, slug):
    assert records.machine_slug(label) == slug
    with pytest.raises(records.RecordError, match="no letters or digits"):
        records.machine_slug("GPU: !!!")


def test_no_results_folder_means_no_machines(tmp_path):
    assert records.load_all(tmp_path / "results", tmp_path / "snippets") == []
