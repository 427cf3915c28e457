"""The version matrix (pipeline/records/versions.py) and the version claims drawn from it
(pipeline/claims/version_claims.py).

- Every cell of the matrix has a record under results/versions/.
- In every release run, the checker's verdict (cudnn_check.py, run in that release's own
  environment) agrees with the library's own decision: the records hold both.
- Claims and tables are drawn from the records; a hand-written version in a claims region, or a
  claim no record backs, fails the build.
- One small cell (the project's own environment: no download) runs end to end, offline, and a
  page drawn from its record builds.
CPU CI does not run the matrix itself: `make versions` does, on the GPU runner's weekly schedule.
"""
from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from conftest import REPO
from pipeline.claims import version_claims as vc
from pipeline.records import store as records, versions

RESULTS = REPO / "results" / records.MATRIX_DIR
SNIPPETS = REPO / "snippets"


@pytest.fixture(scope="module")
def runs() -> list[vc.Run]:
    return vc.load(RESULTS, SNIPPETS)


def test_every_cell_of_the_matrix_has_a_record():
    on_record = {m.slug: m for m in records.load_all(RESULTS, SNIPPETS)}
    missing = [c.name for c in versions.all_cells() if c.name not in on_record
               or not on_record[c.name].records]
    assert not missing, f"no record for {missing}: run `make versions` and commit results/versions"
    for cell in versions.all_cells():
        [record] = on_record[cell.name].records
        assert record.snippet == cell.snippet
        prov = record.data["provenance"]
        assert prov["cell"] == cell.name and prov["machine"].startswith("CPU: ")
        installed = {k.replace("_", "-"): v for k, v in prov["packages"].items()}
        name = {"keras": "keras", "tf-keras": "tf-keras", "torch": "torch"}[cell.facts["library"]]
        if cell.facts.get("nightly"):  # its own distribution; a base may hold a `keras` beneath
            name = "keras-nightly"
            assert record.data["provenance"]["frameworks"]["keras"] == cell.facts["version"]
        assert installed[name].split("+")[0] == cell.facts["version"].split("+")[0], \
            f"{cell.name}: the environment held {name} {installed[name]}"


def _current(runs, backend):
    chosen = [r for r in vc.keras_runs(runs, backend) if r.library == "keras" and not r.stale]
    assert chosen, (f"no current record for Keras on {backend}: snippets/versions/ or the checker "
                    "changed since the matrix ran; run `make versions` and commit results/versions")
    return chosen


def _kind(case: str) -> str:
    return "gru" if "gru" in case else "lstm"


def _library_takes_cudnn(run: vc.Run, case: str) -> bool:
    """The library's own answer: Keras called its cuDNN function (a fused Bidirectional call
    counts), and, where the record also ran that function's body (PyTorch backend), it ran."""
    calls = run.cases[case].get("calls") or []
    if any(c.startswith("bidirectional") for c in calls):
        return True
    if not calls:
        return False
    body = run.cases.get(f"{_kind(case)}_cudnn_body")
    return body is None or body["body"] == "runs"


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_checker_agrees_with_each_release_on_record(runs, backend):
    """Every release run, and the keras-nightly: the checker a reader runs on the next release
    gives the library's own answer there too."""
    disagree = []
    nightly = [r for r in vc.nightly_runs(runs, backend) if not r.stale]
    assert nightly, f"no current keras-nightly record on {backend}"
    for run in _current(runs, backend) + nightly:
        for case, result in run.cases.items():
            if case.endswith("_cudnn_body") or result.get("error") or "training" in case \
                    or case == "lstm_dropout_inference":
                continue  # not a question the static checker answers (a call argument)
            checker = result.get("checker")
            assert isinstance(checker, list), f"{run.version} {case}: the checker failed: {checker}"
            library = _library_takes_cudnn(run, case)
            if library == bool(checker):
                disagree.append(f"Keras {run.version} on {backend}, {case}: the library "
                                f"{'takes' if library else 'refuses'} cuDNN, the checker says "
                                f"{checker or 'eligible'}")
    assert not disagree, "\n".join(disagree)


def test_the_checker_knows_the_dropout_rule_of_each_release(runs):
    """Keras before 3.4 on TensorFlow: any dropout meant the generic kernel. The checker reads
    `dropout` from the layer: the call in training shows whether the release agreed."""
    for run in _current(runs, "tensorflow"):
        result = run.cases["lstm_dropout_training"]
        assert bool(result["calls"]) == ("dropout" not in result["checker"]), run.version


def test_the_checker_says_where_use_cudnn_true_raises_on_pytorch(runs):
    """Keras's layer raises its "use_cudnn=True was specified…" ValueError where the PyTorch
    backend's cuDNN path fails (keras-team/keras#22274), and falls back where the backend catches
    the failure itself. Each release's record holds what the layer did with use_cudnn=True (the
    judge) and what the checker, run in that release on that layer, said: it names the error
    exactly where the release raised it. Both answers are on record."""
    seen = set()
    for run in _current(runs, "torch"):
        for kind in ("lstm", "gru"):
            case = run.cases[f"{kind}_cudnn_body"]
            if "use_cudnn_true" not in case:  # no use_cudnn argument before Keras 3.2
                continue
            raised = (case["use_cudnn_true"].startswith("raises ValueError")
                      and "use_cudnn=True was specified" in case["use_cudnn_true"])
            says = any("use_cudnn=True the layer raises" in m
                       for m in case["checker_use_cudnn_true"])
            assert raised == says, (run.version, kind, case["use_cudnn_true"][:120],
                                    case["checker_use_cudnn_true"])
            seen.add(raised)
    assert seen == {True, False}, seen


def test_the_checkers_version_messages_name_the_releases_on_record(runs, monkeypatch):
    """Each release the checker names in a version-dependent message is the one the records
    show the change in (the thresholds themselves are judged release by release above)."""
    import sys
    from types import SimpleNamespace
    monkeypatch.syspath_prepend(str(SNIPPETS))
    import cudnn_check

    def found(version, backend, kind="lstm", dropout=0.0):
        layer = SimpleNamespace(cell=SimpleNamespace(dropout=dropout, recurrent_dropout=0.0),
                                use_cudnn="auto", unroll=False)
        return {f.criterion: f for f in cudnn_check._keras3_findings(layer, kind, version, backend)}

    def since(*claim):
        return vc.since(runs, *claim)[0]

    dropout = found((3, 3), "jax", dropout=0.5)["dropout"]  # reported before the backend's gate
    assert f"(fixed in {since('tensorflow', 'lstm_dropout_training', 'cudnn')})" in dropout.message
    assert f"Keras >= {since('tensorflow', 'lstm_dropout_inference', 'kept')}," in dropout.fix
    jax = found((3, 13), "jax")["backend_version"]
    assert f"before Keras {since('jax', 'lstm', 'cudnn')}." in jax.message
    assert f"Keras >= {since('jax', 'lstm', 'cudnn')} " in jax.fix
    for version in ((3, 9), (3, 13), (3, 14)):
        torch_lstm = found(version, "torch")["backend_version"]
        assert torch_lstm.fix == f"Upgrade to Keras >= {since('torch', 'lstm', 'cudnn')}."
    torch_gru = found((3, 13), "torch", "gru")["backend_version"]
    assert vc._key(torch_gru.fix.split(">= ")[1]) >= vc._key(since("torch", "gru", "cudnn"))
    # Keras 3.0 and 3.1 on TensorFlow: the mask message (check_mask reads Keras's version).
    monkeypatch.setitem(sys.modules, "keras", SimpleNamespace(__version__="3.1.1"))
    [mask] = cudnn_check.check_mask([[True, True, False]], backend="tensorflow")
    masks_from = since("tensorflow", "lstm_mask_right", "cudnn")
    assert f"from Keras {masks_from}." in mask.message and f"Keras >= {masks_from} " in mask.fix


# --- the claims, on made-up runs (the logic, independent of what is on record) ------------------

def _run(version, cases, backend="tensorflow", stale=False):
    return vc.Run("keras", version, backend, cases, {}, stale, "2026-01-01", {"keras": version})


def _series(answers):
    """Runs of 3.0.0, 3.0.1, 3.1.0, 3.2.0, ... whose case "x" takes cuDNN where answers say."""
    versions_ = ["3.0.0", "3.0.1", "3.1.0", "3.2.0", "3.3.0", "3.4.0"][:len(answers)]
    return [_run(v, {"x": {"calls": ["lstm"] if a else [], "error": None}})
            for v, a in zip(versions_, answers)]


def test_since_is_the_first_release_from_which_every_release_run_agrees():
    assert vc.since(_series([0, 0, 0, 1, 1, 1]), "tensorflow", "x", "cudnn")[0] == "3.2"
    assert vc.since(_series([0, 1, 1, 1]), "tensorflow", "x", "cudnn")[0] == "3.0.1"
    assert vc.since(_series([1, 1, 1]), "tensorflow", "x", "cudnn")[0] == "3.0"
    assert vc.since(_series([1, 0, 1, 1]), "tensorflow", "x", "cudnn")[0] == "3.1"
    with pytest.raises(vc.ClaimError, match="newest release run"):
        vc.since(_series([1, 1, 0]), "tensorflow", "x", "cudnn")
    with pytest.raises(vc.ClaimError, match="no release run on jax"):
        vc.since(_series([1]), "jax", "x", "cudnn")
    with pytest.raises(vc.ClaimError, match="has no case 'y'"):
        vc.since(_series([1]), "tensorflow", "y", "cudnn")


def test_releases_are_the_ranges_run_that_agree():
    assert vc.releases(_series([0, 0, 1, 1, 0, 0]), "tensorflow", "x", "cudnn")[0] == "3.1 to 3.2"
    assert vc.releases(_series([1, 0, 0, 1]), "tensorflow", "x", "cudnn")[0] == "3.0.0, 3.2"
    with pytest.raises(vc.ClaimError, match="no release run gives 'cudnn'"):
        vc.releases(_series([0, 0]), "tensorflow", "x", "cudnn")


def test_a_hand_written_version_in_a_claims_region_is_refused():
    runs = _series([0, 1])
    ok = "<!-- version-claims -->\nsince <!-- since: tensorflow x cudnn --> ([#19645](u#3.4))\n" \
         "<!-- /version-claims -->\nOutside, 3.7 is prose.\n"
    assert vc.render(ok, runs, "en", "p.md") == "\nsince 3.0.1 ([#19645](u#3.4))\n\nOutside, 3.7 " \
        "is prose.\n"
    bad = "<!-- version-claims -->\n| x | since 3.7 |\n<!-- /version-claims -->\n"
    with pytest.raises(vc.ClaimError, match=r"p.md:2: Keras version '3.7' written by hand"):
        vc.render(bad, runs, "en", "p.md")


def test_a_claim_from_an_older_version_of_the_snippet_is_marked():
    runs = _series([0, 1])
    runs[1].stale = True
    assert vc.render("<!-- since: tensorflow x cudnn -->", runs, "en", "p.md") == "3.0.1*"
    assert "from an older version of the check" in vc.table(runs, "en")


# --- the pages: drawn from the records ------------------------------------------------------------

def _answer_word(run: vc.Run, case: str) -> str:
    """What the table must say for one release, from the raw record: an independent reading."""
    result = run.cases[case]
    if result.get("error"):
        return "no such argument"
    if not result["calls"]:
        return "generic"
    if any("bidirectional" in c for c in result["calls"]):
        return "one fused cuDNN call"
    body = run.cases.get(f"{_kind(case)}_cudnn_body", {}).get("body", "runs")
    return "cuDNN" if body in ("runs", "no such function") else "cuDNN chosen, fails"


def test_the_versions_table_places_every_release_run_under_its_own_answer(runs):
    text = vc.table(runs, "en")
    for backend in ("tensorflow", "jax", "torch"):
        column = 1 + [b for b in vc.BACKENDS if vc.keras_runs(runs, b)].index(backend)
        rows = {re.sub(r"`", "", line.split(" | ")[0].lstrip("| ")): line.split(" | ")[column]
                for line in text.splitlines() if line.startswith("| `")}
        assert len(rows) >= 16, text
        chosen = vc.keras_runs(runs, backend)
        for case in ("lstm", "gru", "lstm_mask_right", "lstm_use_cudnn_false", "bidirectional_lstm"):
            label = chosen[-1].labels[case]
            segments = [re.sub(r"<[^>]+>", "", s).split(": ", 1) for s in rows[label].split("<br>")]
            for run in chosen:
                if case not in run.cases or "body" in run.cases[case]:
                    continue
                word = _answer_word(run, case)
                holder = [a for a, span in segments
                          if vc._key(span.split("–")[0].rstrip("*")) <= vc._key(run.version)
                          <= vc._key(span.split("–")[-1].rstrip("*"))]
                assert holder and holder[0].startswith(word), (backend, case, run.version, rows[label])


def test_keras_300_on_tensorflow_sent_no_mask_to_cudnn(runs):
    """What 3.0.0 did with a right-padded mask, as run."""
    [k300] = [r for r in vc.keras_runs(runs, "tensorflow") if r.version == "3.0.0"]
    assert k300.cases["lstm"]["calls"] == ["lstm"]
    assert k300.cases["lstm_mask_right"]["calls"] == []


# The criteria page's sentence on the TensorFlow backend's masks, as built, in each language.
MASK_SENTENCE = {
    "criteria/index.html": r"Any mask meant the generic kernel in Keras ([\d.]+)(?: to ([\d.]+))?"
                           r", right-padded masks too",
    "es/criteria/index.html": r"Cualquier máscara implicaba el kernel genérico en Keras "
                              r"([\d.]+)(?: a ([\d.]+))?, también con relleno por la derecha",
}


@pytest.mark.parametrize("page", sorted(MASK_SENTENCE))
def test_the_criteria_page_says_keras_300_sent_no_mask_to_cudnn(site, runs, page):
    """The built criteria page says that Keras 3.0.0 on TensorFlow sent even a right-padded mask
    to the generic kernel, and that the first release to send it to cuDNN did so, as run."""
    text = re.sub(r"<[^>]+>|\s+", " ", (site / page).read_text(encoding="utf-8"))
    found = re.search(MASK_SENTENCE[page], text)
    assert found, f"{page}: the sentence on masks is gone"
    first, last = found.group(1), found.group(2) or found.group(1)
    assert vc._key(first) <= vc._key("3.0.0") <= vc._key(last), found.group(0)
    chosen = vc.keras_runs(runs, "tensorflow")
    last_key = vc._key(last)  # "3.1" covers 3.1.x
    after = [r for r in chosen if vc._key(r.version)[:len(last_key)] > last_key]
    assert after and after[0].cases["lstm_mask_right"]["calls"] == ["lstm"], found.group(0)


def test_the_criteria_page_draws_its_versions_from_the_records(site, runs):
    for page in ("criteria/index.html", "es/criteria/index.html"):
        body = (site / page).read_text()
        section = body[body.index('id="versions"'):]
        assert "3.0.0" in section and "3.15.1" in section
        for r in vc.keras_runs(runs, "tensorflow"):
            assert r.version in section, f"{page}: Keras {r.version} is on record, not on the page"


# --- one small cell, end to end, offline -------------------------------------------------------------

def test_a_small_cell_runs_records_and_draws_a_page_offline(mini, tmp_path):
    """The project's own environment as a cell: no base, no download. Its record is read back
    and a page drawn from it builds; a version written by hand in a claims region fails it."""
    for name in ("_keras3_cases.py", "keras3_tensorflow.py"):
        mini.snippet(f"versions/{name}", (SNIPPETS / "versions" / name).read_text())
    mini.snippet("cudnn_check.py", (SNIPPETS / "cudnn_check.py").read_text())
    made = tmp_path / "records"  # never the project's results/versions/: not a release
    status = versions.main(["--root", str(mini.root), "--results", str(made), "--cache",
                            str(tmp_path / "cache"), "--only", "pinned-tensorflow"])
    assert status == 0
    results = mini.root / "results" / records.MATRIX_DIR
    shutil.copytree(made, results)  # as if committed
    [run] = vc.load(results, mini.root / "snippets")
    import keras
    assert run.version == keras.__version__ and run.backend == "tensorflow" and not run.stale
    assert run.cases["lstm"]["calls"] == ["lstm"] and run.cases["lstm_relu"]["calls"] == []
    page = mini.root / "docs" / "index.md"
    page.write_text(textwrap.dedent("""\
        # Mini

        <!-- version-claims -->
        | rule | since |
        |---|---|
        | cuDNN with a right-padded mask | <!-- since: tensorflow lstm_mask_right cudnn --> |
        <!-- /version-claims -->

        <!-- versions-table -->
        """))
    proc = mini.build()
    assert proc.returncode == 0, proc.stderr
    html = (mini.root / "site" / "index.html").read_text()
    short = ".".join(keras.__version__.split(".")[:2])
    assert f"<td>{short}</td>" in html and "<code>LSTM(4)</code>, right-padded mask" in html
    page.write_text(page.read_text().replace("<!-- since: tensorflow lstm_mask_right cudnn -->",
                                             "3.2"))
    proc = mini.build()
    assert proc.returncode != 0
    assert "index.md:6: Keras version '3.2' written by hand in a version-claims region" in proc.stderr
    shutil.rmtree(results)
    page.write_text("# Mini\n\n<!-- since: tensorflow lstm cudnn -->\n")
    proc = mini.build()
    assert proc.returncode != 0 and "no record of the version matrix backs it" in proc.stderr


def test_bad_command_lines_get_one_line_and_exit_2(capsys, tmp_path):
    assert versions.main(["--only", "keras-9.9.9-tensorflow"]) == 2
    assert "no such cell: keras-9.9.9-tensorflow" in capsys.readouterr().err
    assert versions.main(["--jobs", "0", "--list"]) == 2
    assert versions.main(["--root", str(REPO), "--only", "pinned-tensorflow"]) == 2
    assert "not a release" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert versions.main(["--results", str(tmp_path / "file"), "--list"]) == 2


# --- the next release before it ships: the keras-nightly, named by its date ------------------------

def _nightly_date_of_record(run: vc.Run) -> str:
    """The day the nightly was built, read from the package its record installed
    (X.Y.Z.devYYYYMMDDHH), not from the cell's label."""
    m = re.fullmatch(r"\d+\.\d+\.\d+\.dev(\d{4})(\d\d)(\d\d)\d*", run.frameworks["keras-nightly"])
    assert m, run.frameworks
    return "-".join(m.groups())


def test_the_newest_keras_nightly_is_on_record_on_every_backend(runs):
    nightly = [c for c in versions.all_cells() if c.facts.get("nightly")]
    assert {c.facts["backend"] for c in nightly if not c.facts.get("topic")} == \
        {"tensorflow", "jax", "torch"}
    for r in [r for r in runs if r.nightly]:
        assert not r.stale, f"the keras-nightly record on {r.backend} is stale"
        assert r.nightly == _nightly_date_of_record(r) == versions.nightly_date(r.version)
        assert ".dev" in r.version and r.frameworks["keras"] == r.version


def test_a_nightly_is_named_by_its_date_and_never_counted_as_a_release(runs):
    nightlies = [r for r in runs if r.nightly]
    assert nightlies
    versions_of = {r.version for r in nightlies}
    minor = {".".join(v.split(".")[:2]) for v in versions_of}  # "3.16": the release to come
    for backend in ("tensorflow", "jax", "torch"):
        assert not [r for r in vc.keras_runs(runs, backend) if r.version in versions_of]
        text, behind = vc.releases(runs, backend, "lstm", "cudnn")
        assert not (minor & set(re.findall(r"\d+\.\d+", text))) and \
            all(not r.nightly for r in behind), text
        assert vc.since(runs, backend, "lstm", "cudnn")[1][-1].version == \
            vc.keras_runs(runs, backend)[-1].version
    for lang in ("en", "es"):
        rendered = vc.render("<!-- newest-run -->\n\n<!-- versions-table -->\n\n"
                             "<!-- run-range: jax -->", runs, lang, "page")
        assert not any(v in rendered for v in versions_of | minor), lang
        said = vc.render("<!-- nightly-run -->\n\n<!-- nightly-changes -->", runs, lang, "page")
        assert not any(v in said for v in versions_of | minor), said
        for r in nightlies:
            assert vc.run_name(r, lang).endswith(r.nightly) and r.nightly in said


def test_the_nightlys_changes_are_drawn_from_its_records(runs):
    """Where the nightly answers a case otherwise than the newest release, the page says so;
    judged by each record's own calls, not by the renderer's wording."""
    said = vc.nightly_changes(runs, "en")
    for backend in ("tensorflow", "jax", "torch"):
        old = vc.keras_runs(runs, backend)[-1]
        [new] = vc.nightly_runs(runs, backend)
        line = next(l for l in said.splitlines() if l.startswith(f"- {vc.WORDS['en'][backend]}:"))
        differ = [c for c in old.cases if c in new.cases
                  and (old.cases[c].get("calls"), old.cases[c].get("error"), old.cases[c].get("body"))
                  != (new.cases[c].get("calls"), new.cases[c].get("error"), new.cases[c].get("body"))]
        if differ:
            assert "each other layer as in" in line and all(old.labels[c].split(",")[0] in line
                                                      for c in differ), line
        else:
            assert "each layer as in Keras " + old.version in line, line


def _stacked(runs, backend):
    return vc.keras_runs(runs, backend, "stacked-mask") + vc.nightly_runs(runs, backend,
                                                                          "stacked-mask")


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_stacked_mask_records_agree_with_the_librarys_own_answers(runs, backend):
    """The second LSTM of the stack: what it received, and whether Keras chose cuDNN for it,
    against the same release's record of one LSTM (the cases) with and without a mask; and
    Keras's warning exactly when the mask stopped at the first LSTM."""
    stacked = _stacked(runs, backend)
    assert {r.version for r in stacked} == set(versions.STACKED_MASK), backend
    for r in stacked:
        [case] = r.cases.values()
        first, second = case["layers"]["first_lstm"], case["layers"]["second_lstm"]
        assert first["mask"] == [[True] * 3 + [False] * 2, [True] * 5]  # the padding, as masked
        same = [c for c in runs if c.backend == backend and not c.topic
                and c.version == r.version]
        assert len(same) == 1, (backend, r.version)
        one = same[0].cases["lstm" if second["mask"] is None else "lstm_mask_right"]
        assert second["cudnn"] == ("cudnn" in vc.outcomes(one)), (backend, r.version)
        assert first["cudnn"] == ("cudnn" in vc.outcomes(same[0].cases["lstm_mask_right"]))
        if second["mask"] is None:
            assert any("Downstream layers will not see the mask" in w and "'first_lstm'" in w
                       for w in case["warnings"]), case["warnings"]
        else:
            assert second["mask"] == first["mask"] and case["warnings"] == []
    # what the page's table says, row by row, from the same records
    table = vc.stacked_mask_table(runs, "en").splitlines()
    for r in stacked:
        second = r.cases["stacked_lstm_mask"]["layers"]["second_lstm"]
        row = next(l for l in table if l.startswith(f"| {vc.WORDS['en'][backend]} | "
                                                      f"{vc.run_name(r)} |"))
        assert ("| none |" in row) == (second["mask"] is None)
        assert ("| cuDNN |" in row) == second["cudnn"], row


def test_the_pinned_stacked_mask_cell_runs_offline_and_matches_its_release(tmp_path, runs):
    """CPU CI's cell: the project's own Keras runs the stacked-mask program end to end; where
    that Keras is a release on record, its answer is the record's."""
    made = tmp_path / "records"
    status = versions.main(["--root", str(REPO), "--results", str(made), "--cache",
                            str(tmp_path / "cache"), "--only", "pinned-stacked-mask-jax"])
    assert status == 0
    [run] = vc.load(made, SNIPPETS)
    import keras
    assert run.version == keras.__version__ and run.topic == "stacked-mask" and not run.stale
    recorded = [r for r in vc.keras_runs(runs, "jax", "stacked-mask") if r.version == run.version]
    for r in recorded:
        assert r.cases == run.cases


def test_a_case_the_nightly_answers_otherwise_is_named_with_both_answers(runs):
    """Were the nightly to send a plain LSTM to the generic loop on JAX, the list would say so,
    naming the release and the nightly by its date (a changed copy of the records)."""
    import copy
    changed = copy.deepcopy(runs)
    [new] = vc.nightly_runs(changed, "jax")
    assert vc.outcomes(new.cases["lstm"]) >= {"cudnn"}
    new.cases["lstm"] = {**new.cases["lstm"], "calls": []}
    line = next(l for l in vc.nightly_changes(changed, "en").splitlines() if l.startswith("- JAX:"))
    old = vc.keras_runs(changed, "jax")[-1]
    assert f"`LSTM(4)`: cuDNN in Keras {old.version}, generic in the keras-nightly of " \
           f"{new.nightly}" in line and "each other layer as in" in line, line


@pytest.mark.parametrize("cell,topic,backend", [("pinned-stacked-mask-torch", "stacked-mask", "torch"),
                                                ("pinned-stateful-torch", "stateful", "torch")])
def test_the_pinned_cells_of_each_topic_match_the_release_on_record(tmp_path, runs, cell, topic,
                                                                      backend):
    """The project's own Keras, asked the same question now, gives the record of its release:
    the records of the other releases were made the same way."""
    made = tmp_path / "records"
    assert versions.main(["--root", str(REPO), "--results", str(made), "--cache",
                          str(tmp_path / "cache"), "--only", cell]) == 0
    [run] = vc.load(made, SNIPPETS)
    [recorded] = [r for r in vc.keras_runs(runs, backend, topic) if r.version == run.version]
    assert run.cases == recorded.cases and run.topic == topic


def test_the_stateful_records_say_which_path_failed(runs):
    """A stateful layer on PyTorch: where it raised in training, the PyTorch backend's own
    function for the layer ran (not Keras's loop), and use_cudnn=False (Keras's loop) trained;
    the nightly that the bugs page names trains on both paths."""
    stateful = vc.keras_runs(runs, "torch", "stateful") + vc.nightly_runs(runs, "torch", "stateful")
    assert {r.version for r in stateful} == set(versions.STATEFUL)
    for r in stateful:
        for case, result in r.cases.items():
            raised = result["raised"]
            assert raised == next((x for x in (result["backward"], result["fit"]) if x != "ok"),
                                  None)
            if raised:
                assert result["path"] == "the backend's own function", (r.version, case)
                assert "modified by an inplace operation" in raised
            if case.endswith("use_cudnn_false"):
                assert result["path"] == "Keras's generic loop" and not raised, (r.version, case)
        if r.nightly:
            assert not any(x["raised"] for x in r.cases.values()), r.cases
