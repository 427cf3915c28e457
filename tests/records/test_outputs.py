"""The committed outputs (results/outputs/, pipeline/records/outputs.py): a fresh clone takes a
snippet's run from there only when it was made from exactly the inputs it has now, and runs it
otherwise. The committed folder itself is checked: every output intact and a snippet's, and a
rotating sample of them run again here, printing what was committed (where the check "every
snippet runs and prints what its page shows" went for the snippets a commit did not change)."""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from pipeline.records import machine, outputs, store
from pipeline.running import device, runner
from pipeline.running.cache import key_for, OUTPUTS_DIR
from pipeline.running.snippets import discover

pytestmark = pytest.mark.usefixtures("cpu_only")

ROTATION_SECONDS = 45  # of recorded run time, re-run in each CI run
# Snippets whose output changes from run to run, in a fresh Python too: never compared.
VARIES = {
    "criteria/tf_backend/dropout.py": "the share of units a random dropout mask zeroes",
    "troubleshooting/keras_stateful.py": "which op's shape TensorFlow's error names first",
}
PRINT = """\
import json, os, pathlib
(pathlib.Path(os.environ['SNIPPET_DATA_DIR']) / 'n.json').write_text(json.dumps({'n': VALUE}))
print('n is', VALUE)
"""


@pytest.fixture
def project(mini, monkeypatch):
    # provenance() probes the frameworks in a child process: not what these tests are about
    monkeypatch.setattr(machine, "provenance", lambda: {"machine": "CPU: test", "date": "2026"})
    mini.snippet("t/one.py", PRINT.replace("VALUE", "1"))
    mini.snippet("t/two.py", PRINT.replace("VALUE", "2"))
    return mini


def _run(mini, cache: str = ".cache", **kw):
    outs = runner.run_all(runner.Project(mini.root, cache=mini.root / cache, **kw))
    return {o.snippet.rel: o for o in outs}


def test_a_fresh_clone_takes_the_committed_run_made_from_the_same_inputs_and_no_other(
        project, monkeypatch):
    first = _run(project)
    assert all(o.executed and o.status == runner.OK for o in first.values()), first
    assert outputs.save(runner.Project(project.root), say=lambda line: None) == []
    # a fresh clone: no cache, the committed folder only
    fresh = _run(project, cache="clone-cache")
    for rel, n in (("t/one.py", 1), ("t/two.py", 2)):
        o = fresh[rel]
        assert (o.executed, o.committed, o.stdout) == (False, True, first[rel].stdout), rel
        assert json.loads((Path(o.data_dir) / "n.json").read_text()) == {"n": n}
        # the program it ran as sits in its run's folder, as after a run (the copy tests read it)
        name = rel.split("/")[-1]
        assert (Path(o.data_dir).parent / name).read_bytes() == \
            (Path(first[rel].data_dir).parent / name).read_bytes()
    # an edited snippet runs; its neighbour stays committed
    project.snippet("t/two.py", PRINT.replace("VALUE", "22"))
    again = _run(project, cache="clone-2")
    assert again["t/two.py"].executed and again["t/two.py"].stdout == "n is 22\n"
    assert again["t/one.py"].committed
    # and so does everything, with the committed outputs turned off
    monkeypatch.setenv("SNIPPETS_COMMITTED", "0")
    assert all(o.executed for o in _run(project, cache="clone-3").values())


def test_a_damaged_committed_output_is_never_shown(project):
    _run(project)
    outputs.save(runner.Project(project.root), say=lambda line: None)
    folder = project.root / "results" / OUTPUTS_DIR / "snippets" / "t" / "one.py"
    (folder / "data" / "n.json").write_text('{"n": 5}')  # hand-edited
    (folder.parent / "two.py" / "data" / "extra.json").write_text("{}")  # a file it never wrote
    fresh = _run(project, cache="clone-cache")
    assert fresh["t/one.py"].executed and fresh["t/two.py"].executed


def test_saving_keeps_what_matches_and_drops_what_cannot_match_again(project, monkeypatch):
    said = []
    _run(project)
    outputs.save(runner.Project(project.root), say=said.append)
    assert said == [f"results/{OUTPUTS_DIR}/: 2 saved, 0 unchanged, 0 removed"]
    top = project.root / "results" / OUTPUTS_DIR / "snippets" / "t"
    # edited and failing: no run to save, and the old output is dropped; a deleted one goes too
    project.snippet("t/two.py", "raise SystemExit(3)\n")
    (project.root / "snippets" / "t" / "one.py").unlink()
    project.snippet("t/three.py", "print(3)\n")
    _run(project)
    said.clear()
    missing = outputs.save(runner.Project(project.root), say=said.append)
    assert missing == ["t/two.py"]
    assert said[0] == f"results/{OUTPUTS_DIR}/: 1 saved, 0 unchanged, 2 removed"
    assert sorted(p.name for p in top.iterdir()) == ["three.py"]
    # a GPU machine's runs are records, never committed outputs
    monkeypatch.setenv("SNIPPETS_DEVICE", "GPU: Test Card")
    device.device_kind.cache_clear()  # cpu_only clears it again after the test
    with pytest.raises(SystemExit, match="make add-records"):
        outputs.save(runner.Project(project.root))


# --- the committed folder of this repository -----------------------------------------------------

def _committed() -> dict[str, dict]:
    top = REPO / "results" / OUTPUTS_DIR / store.SNIPPETS_DIR
    found = {}
    for result in sorted(top.rglob(store.RESULT_FILE)):
        rel = result.parent.relative_to(top).as_posix()
        data = json.loads(result.read_text(encoding="utf-8"))
        store._check(data, result.parent, rel, result, outputs.SAVED)
        found[rel] = data
    return found


def test_every_committed_output_is_intact_and_a_snippets_cpu_run():
    committed = _committed()
    known = {s.rel for s in discover(REPO / "snippets") if not s.matrix}
    assert committed and set(committed) <= known, sorted(set(committed) - known)
    assert all(d["device"] == "CPU" and d.get("key") for d in committed.values())
    info = json.loads((REPO / "results" / OUTPUTS_DIR / store.MACHINE_FILE).read_text())
    assert info["provenance"]["machine"].startswith("CPU: ")
    for rel in VARIES:
        assert rel in known, f"{rel} is listed as varying but is no snippet"


def _head() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "no git"


def test_a_rotating_sample_of_the_committed_outputs_prints_the_same_here(tmp_path):
    """Run again, in a fresh Python and an empty cache, the committed outputs a commit picks
    (by the hash of the commit and the snippet's name, up to ROTATION_SECONDS of their recorded
    run time): each must print exactly what was committed. Benchmarks (their figures are
    measurements) and VARIES are left out; the runs that changed are run by the build itself."""
    project = runner.Project(REPO)
    snippets = {s.rel: s for s in discover(REPO / "snippets")}
    in_use = [rel for rel, d in _committed().items()
              if rel in snippets and rel not in VARIES and d["status"] == runner.OK
              and not snippets[rel].exclusive
              and d["key"] == key_for(snippets[rel], project.requirements, "CPU")]
    head = _head()
    order = sorted(in_use, key=lambda rel: hashlib.sha256(f"{head}:{rel}".encode()).hexdigest())
    committed, sample, seconds = _committed(), [], 0.0
    for rel in order:
        if seconds + committed[rel]["seconds"] <= ROTATION_SECONDS or not sample:
            sample.append(rel)
            seconds += committed[rel]["seconds"]
    ran = runner.run_all(runner.Project(REPO, cache=tmp_path / "cache", committed=False),
                         only=sample)
    for o in ran:
        assert o.executed and o.status == runner.OK, (o.snippet.rel, o.problem, o.stderr_tail())
        assert o.stdout == committed[o.snippet.rel]["stdout"], o.snippet.rel


# --- the notebooks' executed pages ---------------------------------------------------------------

def _notebook_hook():
    from conftest import module_from
    return module_from(REPO / "pipeline" / "pages" / "hooks" / "notebook_outputs.py")


def test_a_committed_notebook_page_is_adopted_only_as_saved(tmp_path):
    hook = _notebook_hook()
    committed, cache = tmp_path / "committed", tmp_path / "cache"
    committed.mkdir()
    for name, text in (("a.json", '{"content": "a"}'), ("b.json", '{"content": "b"}'),
                       ("c.json", '{"content": "c"}')):
        (committed / name).write_text(text)
    index = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in committed.iterdir()}
    (committed / hook.INDEX).write_text(json.dumps(index))
    (committed / "b.json").write_text('{"content": "edited by hand"}')
    cache.mkdir()
    (cache / "c.json").write_text('{"content": "this machine ran it"}')
    assert hook.adopt(committed, cache) == ["a.json"]
    assert (cache / "a.json").read_text() == '{"content": "a"}' and not (cache / "b.json").exists()
    assert (cache / "c.json").read_text() == '{"content": "this machine ran it"}'


def test_the_committed_notebook_pages_are_intact_one_environment_of_both_languages():
    top = REPO / "results" / OUTPUTS_DIR / "notebooks"
    hook = _notebook_hook()
    (folder,) = [p for p in top.iterdir() if not p.name.startswith(".")]
    saved = json.loads((folder / hook.INDEX).read_text())
    assert len(saved) == 2  # English and Spanish
    assert {p.name for p in folder.iterdir()} == set(saved) | {hook.INDEX}
    for name, digest in saved.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


def test_saving_the_notebook_pages_keeps_this_environments_only(project):
    p = runner.Project(project.root)
    env = _notebook_hook().environment_key(p.requirements, "CPU")
    cache = p.cache / "mkdocs-jupyter" / env
    cache.mkdir(parents=True)
    (cache / "k1.json").write_text('{"content": "en"}')
    older = project.root / "results" / OUTPUTS_DIR / "notebooks" / "0ldenv"
    older.mkdir(parents=True)
    (older / "k0.json").write_text("{}")
    assert outputs.save_notebooks(p, say=lambda line: None)
    top = older.parent
    assert sorted(x.name for x in top.iterdir()) == [env]
    assert json.loads((top / env / "renders.json").read_text()) == {
        "k1.json": hashlib.sha256(b'{"content": "en"}').hexdigest()}
    assert _notebook_hook().adopt(top / env, project.root / "fresh") == ["k1.json"]
