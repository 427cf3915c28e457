"""Bugs of one release (data/release_bugs.yml, pipeline/claims/release_bugs.py,
docs/troubleshooting/release-bugs.md and .es.md): every row loads and is checked against the
installed releases and the version matrix, a wrong row stops the build naming it, both languages
draw every row under its library's heading, and each row's symptom pasted whole into the site's
search lists the page among the first three results, in both languages."""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from chromium import first_three  # the site's own search worker
from conftest import REPO
from pipeline.claims import release_bugs, release_numbers, version_claims

DATA = REPO / "data" / "release_bugs.yml"
PAGES = {"en": REPO / "docs" / "troubleshooting" / "release-bugs.md",
         "es": REPO / "docs" / "troubleshooting" / "release-bugs.es.md"}


@pytest.fixture(scope="module")
def runs():
    return version_claims.load(REPO / "results" / "versions", REPO / "snippets")


@pytest.fixture(scope="module")
def libraries(runs):
    return release_bugs.load(DATA, runs)


def test_every_row_loads_and_is_checked(libraries):
    rows = [r for rs in libraries.values() for r in rs]
    assert len(rows) >= 20, len(rows)
    raw = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    for r in rows:
        check = next(x for x in raw[r.library] if x["id"] == r.id).get("check") or {}
        if r.installed:  # every library installed here is placed against every row
            assert r.here in ("fixed", "affected", "past", "between"), (r.id, r.installed)
        if "installed" in check:
            assert r.installed and r.here in ("fixed", "affected"), r.id
        if "matrix" in check:
            assert r.matrix_runs, r.id  # at least one release run inside the affected range
    # what the installed releases say of the rows, as the data was written
    here = {r.id: r.here for r in rows}
    assert here["keras-gru-return-state-gpu"] == "fixed"
    assert here["keras-torch-stateful-gru-cudnn-backward"] == "affected"  # Keras 3.15.1
    assert here["pytorch-compile-after-rnn-eager"] == "affected"  # PyTorch 2.14.1
    by_id = {r.id: r for r in rows}
    assert by_id["pytorch-compile-after-rnn-eager"].matrix_runs == ("2.13.0", "2.14.1")
    assert "3.11.3" in by_id["keras-bidirectional-use-cudnn-false"].matrix_runs


def _planted(tmp_path, library: str, row_id: str, change) -> Path:
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    row = next(r for r in data[library] if r["id"] == row_id)
    change(row)
    path = tmp_path / "release_bugs.yml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _no_source(row):
    del row["source"]["url"]


def _unreadable(row):
    row["affected"]["to"] = "3.x"


def _fix_after_the_release_that_brought_it(row):
    # Keras 3.15.1, installed here, already holds the fix's code: it cannot come in 3.16.0
    row["affected"]["to"], row["fixed_in"] = "3.15.1", "3.16.0"


def _fix_too_early_for_the_matrix(row):
    # 3.11.3 of the version matrix still runs cuDNN for Bidirectional(use_cudnn=False)
    row["affected"]["to"], row["fixed_in"] = "3.10.0", "3.11.0"


def _fixed_before_affected_ends(row):
    row["fixed_in"] = "3.11.2"


def _fix_code_not_there(row):
    row["check"]["installed"]["text"] = "code that no release of Keras holds"


def _nightly_not_on_record(row):
    row["nightly"]["version"] = "3.16.0.dev2026010100"  # a nightly the matrix never ran


def _nightly_for_a_fixed_row(row):
    row["nightly"] = {"version": "3.16.0.dev2026102704", "file": "src/layers/rnn/rnn.py",
                      "text": "self._expected_batch_size = None"}


def _nightly_still_shows(row):
    # Keras's own loop (use_cudnn=False) is the same in 3.15.1 and the nightly: naming a case
    # that both give, the nightly cannot be the one with the fix
    row["check"]["matrix"]["case"] = "stateful_lstm_use_cudnn_false"
    row["check"]["matrix"]["shows"] = "generic"


def _no_longer_affected(row):
    # PyTorch 2.14.1 of the version matrix still leaves the code after the LSTM uncompiled
    row["fixed_in"], row["affected"]["to"] = "2.14.0", "2.13.0"


@pytest.mark.parametrize("library,row_id,change,says", [
    ("keras", "keras-3-0-0-lstm-slow", _no_source, "no source URL"),
    ("keras", "keras-3-0-0-lstm-slow", _unreadable, "'3.x' is not a readable release number"),
    ("keras", "keras-gru-return-state-gpu", _fix_after_the_release_that_brought_it,
     "already holds the fix's code"),
    ("keras", "keras-bidirectional-use-cudnn-false", _fix_too_early_for_the_matrix,
     "3.11.3 still shows it"),
    ("keras", "keras-gru-return-state-gpu", _fixed_before_affected_ends,
     "the fix must come after the last affected release"),
    ("keras", "keras-stateful-batch-size-silent", _fix_code_not_there, "lacks the fix's code"),
    ("pytorch", "pytorch-compile-after-rnn-eager", _no_longer_affected, "2.14.1 still shows it"),
    ("keras", "keras-torch-stateful-gru-cudnn-backward", _nightly_not_on_record,
     "no record of keras-nightly 3.16.0.dev2026010100"),
    ("keras", "keras-stateful-batch-size-silent", _nightly_for_a_fixed_row,
     "no release has fixed"),
    ("keras", "keras-torch-stateful-gru-cudnn-backward", _nightly_still_shows,
     "the keras-nightly of 2026-10-27 still shows it"),
])
def test_a_wrong_row_fails_in_one_line_naming_it(tmp_path, runs, library, row_id, change, says):
    path = _planted(tmp_path, library, row_id, change)
    with pytest.raises(release_bugs.ReleaseBugsError) as e:
        release_bugs.load(path, runs)
    message = str(e.value)
    assert "\n" not in message and row_id in message and says in message, message
    # the page's marker fails the same way, and the hook stops a strict build on it
    with pytest.raises(release_bugs.ReleaseBugsError):
        release_bugs.render(f"<!-- release-bugs: {library} -->", "en", runs, path)
    hook = (REPO / "pipeline" / "pages" / "hooks" / "build.py").read_text(encoding="utf-8")
    assert "except release_bugs.ReleaseBugsError as e:\n        _problem(" in hook


def test_the_tables_release_numbers_sit_next_to_their_source(libraries):
    """CONTRIBUTING's rule for typed release numbers holds for the drawn tables too: each row
    links its source."""
    for lang in ("en", "es"):
        for rows in libraries.values():
            assert release_numbers.check(release_bugs.table(rows, lang), "table") == []


def test_both_pages_hold_one_marker_per_library_under_its_heading(libraries):
    for lang, page in PAGES.items():
        text = page.read_text(encoding="utf-8")
        assert sorted(release_bugs.MARKER.findall(text)) == sorted(libraries), lang
        for library in libraries:
            at = text.index(f"<!-- release-bugs: {library} -->")
            heading = text[:at].rstrip().splitlines()[-1]
            assert heading.startswith("## ") and heading.endswith(
                f"{{ #release-bugs-{library} }}"), (lang, heading)


def _page(site: Path, lang: str) -> Path:
    return site / ("es/" if lang == "es" else "") / "troubleshooting" / "release-bugs" / "index.html"


def test_both_languages_draw_every_row_with_its_source(site_root, libraries):
    for lang in ("en", "es"):
        soup = BeautifulSoup(_page(site_root, lang).read_text(encoding="utf-8"), "html.parser")
        for library, rows in libraries.items():
            table = soup.find(id=f"release-bugs-{library}").find_next("table")
            lines = table.find("tbody").find_all("tr")
            assert len(lines) == len(rows), (lang, library)
            for r, tr in zip(rows, lines):
                cells = [" ".join(td.get_text(" ").split()) for td in tr.find_all("td")]
                assert cells[0] == " ".join(r.symptom.split()), (lang, r.id, cells[0])
                assert cells[3].startswith(" ".join(r.raw["note"][lang].split())), (lang, r.id)
                assert r.raw["source"]["url"] in [a["href"] for a in tr.find_all("a")], r.id
                if r.raw["fixed_in"] is not None:
                    assert cells[2].startswith(str(r.raw["fixed_in"])), (lang, r.id)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_pasted_symptom_lists_the_page_in_the_first_three_results(browser, server, libraries,
                                                                    lang):
    """Through the site's own search worker, as a reader pastes each row's symptom whole."""
    rows = [r for rs in libraries.values() for r in rs]
    queries = [r.symptom for r in rows]
    answers = first_three(browser, server, lang, queries)
    want = f"{'es/' if lang == 'es' else ''}troubleshooting/release-bugs/"
    problems = []
    for r, items in zip(rows, answers):
        pages = [re.sub(r"#.*$", "", item[0]) for item in items]
        if not any(p.endswith(want) for p in pages):
            problems.append(f"{r.id}: {pages}")
    assert not problems, f"{lang}: {len(problems)} of {len(rows)}: {problems}"


def _nightly_row(libraries):
    return next(r for r in libraries["keras"] if r.raw.get("nightly"))


def test_a_fix_in_no_release_names_the_nightly_that_has_it_by_its_date(libraries, runs):
    """The row whose fix only a nightly has: its date comes from the matrix's record of that
    nightly (the package it installed), the table names it by that date, never as a release."""
    row = _nightly_row(libraries)
    assert row.fixed is None and row.id == "keras-torch-stateful-gru-cudnn-backward"
    [date] = {r.nightly for r in runs if r.version == row.raw["nightly"]["version"]}
    recorded = {r.frameworks["keras-nightly"] for r in runs if r.nightly == date}
    assert recorded == {row.raw["nightly"]["version"]}
    assert row.nightly == date == "-".join(re.match(r".*\.dev(\d{4})(\d\d)(\d\d)",
                                                    row.raw["nightly"]["version"]).groups())
    minor = ".".join(row.raw["nightly"]["version"].split(".")[:2])
    for lang, words in (("en", f"not in a release; in the keras-nightly of {date}"),
                        ("es", f"en ninguna versión; en el keras-nightly del {date}")):
        line = next(l for l in release_bugs.table(libraries["keras"], lang).splitlines()
                    if l.startswith("| " + release_bugs._cell(row.symptom) + " |"))
        cells = line.split(" | ")
        assert words in cells[2] and minor not in cells[2], cells[2]
    # the records show it: 3.15.1 raises on the CPU, the nightly does not
    assert row.matrix_runs[-1] == f"the keras-nightly of {date}"
    # without the matrix's records, nothing names a nightly
    bare = release_bugs.load(DATA)
    assert not any(r.nightly for r in bare["keras"])


def _env_with(tmp_path, date: str, text: str) -> Path:
    envs = tmp_path / "envs"
    f = envs / f"keras-nightly-{date}-torch" / "lib" / "python3.11" / "site-packages" / "keras" \
        / "src" / "layers" / "rnn" / "lstm.py"
    f.parent.mkdir(parents=True)
    f.write_text(text, encoding="utf-8")
    return envs


def test_the_nightlys_code_is_read_where_the_matrix_built_it(tmp_path, runs, libraries):
    """Where the nightly's environment is here, the fix's code must be in it: a nightly without
    it fails the row in one line; one with it passes."""
    row = _nightly_row(libraries)
    text = row.raw["nightly"]["text"]
    good = _env_with(tmp_path / "good", row.nightly, f"x = 1\n{text}\n")
    assert release_bugs.load(DATA, runs, envs=good)["keras"]
    bad = _env_with(tmp_path / "bad", row.nightly, "no fix here\n")
    with pytest.raises(release_bugs.ReleaseBugsError) as e:
        release_bugs.load(DATA, runs, envs=bad)
    assert row.id in str(e.value) and "lacks" in str(e.value) and "\n" not in str(e.value)
    here = release_bugs._nightly_file(row.nightly, row.raw["nightly"]["file"],
                                      release_bugs.NIGHTLY_ENVS)
    if here is not None:  # the machine that ran the matrix: the real nightly holds it
        assert text in here.read_text(encoding="utf-8")
    # and the installed release, which the row says is affected, does not
    folder = release_bugs._package_folder("keras")
    assert text not in (folder / row.raw["nightly"]["file"]).read_text(encoding="utf-8")
