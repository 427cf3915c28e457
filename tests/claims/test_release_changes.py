"""What changed, release by release (data/release_changes.yml, data/release_files.yml,
pipeline/claims/release_changes.py): every pair of consecutive releases whose recurrent-layer
files differ has a row, every row names its pull requests or says why none, the releases
installed here hash as the data says, a quoted message stands in the old release's code, both
languages draw every row, and a pasted symptom finds the page."""
from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import re
from pathlib import Path

import pytest
import yaml
from packaging.version import Version

from chromium import first_three  # the site's own search worker
from conftest import REPO
from pipeline.claims import release_changes, release_files

CHANGES = REPO / "data" / "release_changes.yml"
FILES = REPO / "data" / "release_files.yml"
BUGS = REPO / "data" / "release_bugs.yml"


@pytest.fixture(scope="module")
def libraries():
    return release_changes.load(CHANGES, FILES, BUGS)


@pytest.fixture(scope="module")
def files():
    return yaml.safe_load(FILES.read_text(encoding="utf-8"))


def test_every_release_of_the_span_is_read_and_every_change_has_a_row(libraries, files):
    # the releases on PyPI in the span of issue #59, as the generator read them
    assert len(files["keras"]) == 40 and min(files["keras"], key=Version) == "3.0.0"
    assert max(files["keras"], key=Version) == "3.15.1"
    assert {"2.14.1", "2.21.0"} <= set(files["tf-keras"])
    assert {"2.13.0", "2.14.1", "2.15.0"} <= set(files["pytorch"])
    assert {"0.4.23", "0.10.2"} <= set(files["jax"])
    # pairs whose hashes differ, computed here from the hashes, not by the module under test
    for library, releases in files.items():
        order = sorted(releases, key=Version)
        differ = {(a, b) for a, b in zip(order, order[1:]) if releases[a] != releases[b]}
        rows = {(str(r["from"]), str(r["to"])) for r in libraries[library]}
        assert rows == differ, library
    assert len(libraries["keras"]) == 20  # issue #59: 20 of the 39 Keras 3 releases after 3.0.0


def test_every_row_links_its_pull_requests_or_says_why_none(libraries):
    for library, rows in libraries.items():
        for r in rows:
            links = [p["url"] for p in r["prs"]] + ([r["issue"]["url"]] if r.get("issue") else [])
            assert all(u.startswith("https://github.com/") for u in links), (library, r["to"])
            assert links or r.get("prs_none"), (library, r["to"])
            assert Version(str(r["from"])) < Version(str(r["to"]))
            kind = r["kind"]
            assert kind in ("visible", "internal")
            text = r["symptom"] if kind == "visible" else r["what"]
            assert text["en"].strip() and text["es"].strip() and text["en"] != text["es"]


def test_the_installed_releases_hash_as_the_data_says(files):
    """Re-hashed here with hashlib, file by file, for the project's own installed packages (and,
    through local_problems, every environment of the version matrix present)."""
    checked = 0
    for library, spec in release_files.LIBRARIES.items():
        try:
            dist = importlib.metadata.distribution(spec["distribution"])
        except importlib.metadata.PackageNotFoundError:
            continue
        version = release_files.release(dist.version)
        if version not in files[library]:
            continue
        root = Path(dist.locate_file("")) / spec["prefix"]
        for name, digest in files[library][version].items():
            assert hashlib.sha256((root / name).read_bytes()).hexdigest()[:16] == digest, \
                (library, version, name)
            checked += 1
    assert checked >= 20, checked  # keras alone has 20 files
    problems, releases = release_changes.local_problems(release_files.ENVS, CHANGES, FILES)
    assert not problems, problems
    installed = importlib.metadata.version("keras")
    assert f"keras {installed}" in releases


def _site_packages(tmp_path: Path, env: str, dist: str, version: str) -> Path:
    site = tmp_path / "envs" / env / "lib" / "python3.11" / "site-packages"
    (site / f"{dist}-{version}.dist-info").mkdir(parents=True)
    return site


def _install(site: Path, library: str, version: str, source: Path) -> None:
    """A copy of a release's recurrent-layer files, as the data's hashes name them."""
    prefix = site / release_files.LIBRARIES[library]["prefix"]
    for name in yaml.safe_load(FILES.read_text())[library][version]:
        (prefix / name).parent.mkdir(parents=True, exist_ok=True)
        (prefix / name).write_bytes((source / name).read_bytes())


def test_an_installed_release_that_differs_from_the_data_is_named(tmp_path, files):
    """A release whose files are not those of the published wheel (here: the installed Keras's
    files under another release's number) fails, naming the release and the files."""
    keras = Path(importlib.metadata.distribution("keras").locate_file("")) / "keras" / "src"
    installed = release_files.release(importlib.metadata.version("keras"))
    other = next(v for v in files["keras"] if files["keras"][v] != files["keras"][installed])
    site = _site_packages(tmp_path, "keras-x", "keras", other)
    _install(site, "keras", installed, keras)
    problems, _ = release_changes.local_problems(tmp_path / "envs", CHANGES, FILES)
    mine = [p for p in problems if f"keras {other} " in p]
    assert mine and "files differ" in mine[0] and "\n" not in mine[0], problems


def test_a_release_missing_from_the_data_is_named(tmp_path):
    site = _site_packages(tmp_path, "keras-new", "keras", "3.99.0")
    (site / "keras" / "src" / "layers" / "rnn").mkdir(parents=True)
    problems, _ = release_changes.local_problems(tmp_path / "envs", CHANGES, FILES)
    assert any("keras 3.99.0" in p and "run the generator" in p for p in problems), problems


def test_a_quoted_message_must_be_in_the_old_releases_code(tmp_path, libraries):
    """A row's message is looked for in its old release where that release is installed: the
    release's files without it fail the row."""
    row = next(r for r in libraries["keras"] if r.get("message"))
    old = str(row["from"])
    site = _site_packages(tmp_path, "keras-old", "keras", old)
    for name in yaml.safe_load(FILES.read_text())["keras"][old]:
        (site / "keras" / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (site / "keras" / "src" / name).write_text("no message here\n")
    problems, _ = release_changes.local_problems(tmp_path / "envs", CHANGES, FILES)
    assert any(f"keras {old}: the message" in p for p in problems), problems
    # where the matrix built that release here, its real code holds the message
    real = release_files.local_installs().get("keras", {}).get(old)
    if real is not None:
        texts = [p.read_text() for p in (real / "keras" / "src").glob("layers/rnn/*.py")]
        assert any(row["message"] in t for t in texts)


def _planted(tmp_path, library, index, change) -> Path:
    data = yaml.safe_load(CHANGES.read_text(encoding="utf-8"))
    change(data[library], index)
    path = tmp_path / "release_changes.yml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _drop(rows, i):
    del rows[i]


def _no_source(rows, i):
    rows[i]["prs"], rows[i]["prs_none"] = [], "nothing to say"
    rows[i].pop("issue", None)


def _unreadable(rows, i):
    rows[i]["to"] = "3.x"


def _wrong_bug(rows, i):
    rows[i]["bugs"] = ["keras-gru-return-state-gpu"]  # fixed in 3.11.3, not in 3.0.1


def _no_spanish(rows, i):
    rows[i]["symptom"] = {"en": rows[i]["symptom"]["en"]}


def _wrong_files(rows, i):
    rows[i]["files"] = {"layers/rnn/gru.py": "+1 -1"}


def _run_not_quoted(rows, i):
    rows[i]["run"][0]["shows"] = "array: TypeError: words the symptom does not quote"


@pytest.mark.parametrize("change, words", [
    (_drop, "no row for the change between 3.0.0 to 3.0.1"),
    (_no_source, "prs_none does not say why"),
    (_unreadable, "not a readable release number"),
    (_wrong_bug, "keras-gru-return-state-gpu"),
    (_no_spanish, "needs en and es"),
    (_wrong_files, "are not those that differ"),
    (_run_not_quoted, "is not quoted in the symptom"),
])
def test_a_wrong_row_stops_the_build_naming_it(tmp_path, change, words):
    path = _planted(tmp_path, "keras", 0, change)
    with pytest.raises(release_changes.ReleaseChangesError) as e:
        release_changes.load(path, FILES, BUGS)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)
    markdown, problems = release_changes.render("<!-- release-changes: keras -->", "en",
                                                _root_with(tmp_path, path))
    assert problems and words in problems[0]


def _root_with(tmp_path, changes: Path) -> Path:
    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    (root / "data" / "release_changes.yml").write_bytes(changes.read_bytes())
    (root / "data" / "release_files.yml").write_bytes(FILES.read_bytes())
    (root / "data" / "release_bugs.yml").write_bytes(BUGS.read_bytes())
    return root


def test_the_generator_reads_only_recurrent_code_and_summarises_a_diff():
    from pipeline.claims import release_changes_gen as gen
    pick = release_files.selected
    assert pick("keras", "keras/src/layers/rnn/lstm.py") == "layers/rnn/lstm.py"
    assert pick("keras", "keras/src/backend/torch/rnn.py") == "backend/torch/rnn.py"
    assert pick("keras", "keras/src/layers/rnn/lstm_test.py") is None
    assert pick("keras", "keras/src/backend/torch/nn.py") is None
    assert pick("keras", "keras/src/layers/rnn/sub/x.py") is None
    assert pick("pytorch", "torch/nn/modules/rnn.py") == "nn/modules/rnn.py"
    assert pick("pytorch", "torch/nn/modules/linear.py") is None
    old = b"def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    new = b"def f():\n    return 1\n\n\ndef g():\n    x = 2\n    return x\n"
    assert gen.summary(old, new) == "+2 -1: g"
    assert gen.summary(None, new) == "added" and gen.summary(old, None) == "removed"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_both_languages_draw_every_row(libraries, lang):
    page = (REPO / "docs" / "troubleshooting" /
            ("release-bugs.es.md" if lang == "es" else "release-bugs.md")).read_text()
    markdown, problems = release_changes.render(page, lang, REPO)
    assert not problems
    for library, rows in libraries.items():
        assert f"{{ #release-changes-{library} }}" in page
        for r in rows:
            cell = re.escape(release_changes._cell(f"{r['from']} → {r['to']}"))
            assert re.search(cell, markdown), (lang, library, r["to"])
            if r["kind"] == "visible":
                assert release_changes._cell(r["symptom"][lang]) in markdown


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_pasted_symptom_lists_the_page_in_the_first_three_results(browser, server, libraries,
                                                                    lang):
    """Through the site's own search worker, each visible row's symptom pasted whole."""
    rows = [r for rs in libraries.values() for r in rs if r["kind"] == "visible"]
    answers = first_three(browser, server, lang, [r["symptom"][lang] for r in rows])
    want = f"{'es/' if lang == 'es' else ''}troubleshooting/release-bugs/"
    problems = [f"{r['to']}: {items}" for r, items in zip(rows, answers)
                if not any(re.sub(r"#.*$", "", i[0]).endswith(want) for i in items)]
    assert not problems, f"{lang}: {len(problems)} of {len(rows)}: {problems}"


def _rows_with_programs(libraries):
    rows = [r for r in libraries["keras"] if r.get("run")]
    assert len(rows) >= 3
    if not release_files.ENVS.is_dir():
        pytest.skip("the version matrix's environments (.cache/versions/envs) are not on this "
                    "machine: the programs run where `make versions` built them")
    return rows


def test_each_rows_program_prints_the_symptom_in_the_old_release_only(libraries):
    """The errors quoted in a symptom, as the old release raises them (run on the CPU in the
    version matrix's environments); the new release runs the same program without them."""
    ran, problems = [], []
    for row in _rows_with_programs(libraries):
        r, p = release_changes.run_check(row)
        assert r, (row["to"], "no environment of either release here")
        ran += r
        problems += p
    assert not problems, problems
    assert "keras 3.0.5 (torch)" in ran and "keras 3.1.1 (torch)" in ran, ran


def test_a_program_that_does_not_print_the_symptom_fails_the_row(libraries):
    row = copy.deepcopy(next(r for r in _rows_with_programs(libraries)
                             if r["run"][0]["backend"] == "jax"))
    row["run"] = [dict(row["run"][0], shows=row["run"][0]["shows"] + " (and more words)")]
    ran, problems = release_changes.run_check(row)
    assert ran and any("does not print" in p for p in problems), (ran, problems)
