"""Keras's mixed-precision dtype policies in the version matrix (snippets/versions/_mixed_precision.py,
tf_keras_mixed_precision.py; cells keras-<release>-mixed-precision-<backend> and
tf-keras-<release>-mixed-precision), and the tables the numbers page draws from them.

Each record is judged by something it did not produce: the same release's record of the cases
(another snippet, the same decision of Keras's), Keras's and TensorFlow's own answers in the
project's environment, and the criteria page's programs, which ask the pinned release by another
route (their own GPU pretence)."""
from __future__ import annotations

import re

import pytest

from conftest import REPO, printed
from pipeline.claims import version_claims as vc
from pipeline.records import store as records, versions

RESULTS = REPO / "results" / records.MATRIX_DIR
SNIPPETS = REPO / "snippets"
MIXED = "mixed-precision"
PAGES = [REPO / "docs" / "troubleshooting" / f"numbers{lang}.md" for lang in ("", ".es")]


@pytest.fixture(scope="module")
def runs() -> list[vc.Run]:
    return vc.load(RESULTS, SNIPPETS)


def _mixed(runs, backend):
    return vc.keras_runs(runs, backend, MIXED) + vc.nightly_runs(runs, backend, MIXED)


def _compute_dtype(policy: str) -> str:
    """Keras's own answer: the dtype a layer computes in under this policy."""
    import keras
    return keras.DTypePolicy(policy).compute_dtype


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch", "tf-keras"])
def test_every_release_has_a_current_mixed_precision_record(runs, backend):
    chosen = _mixed(runs, backend)
    if backend == "tf-keras":
        want = {tfk for tf, tfk in versions.TF_KERAS.values()}
    else:
        want = set(versions.MIXED_PRECISION)
    assert {r.version for r in chosen} == want, backend
    assert not [r.version for r in chosen if r.stale], \
        "records older than the snippet: run the mixed-precision cells again"


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_float32_takes_the_path_the_releases_own_cases_took(runs, backend):
    """Under float32, each release chooses cuDNN for the LSTM and the GRU exactly where its
    record of the cases (another program, the same decision) says it does."""
    for r in _mixed(runs, backend):
        [plain] = [p for p in runs if p.backend == backend and not p.topic
                   and p.version == r.version and p.nightly == r.nightly]
        for kind in ("lstm", "gru"):
            assert r.cases[f"{kind}_float32"]["calls"] == plain.cases[kind]["calls"], \
                (backend, r.version, kind)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_what_reaches_cudnn_is_the_policys_dtype_or_float32(runs, backend):
    """Where Keras calls its cuDNN function, what it hands over is in the dtype Keras's own
    DTypePolicy computes in, or in float32 (where a release converts it); no call fails to build
    its layer. On TensorFlow, the op the release's function builds, traced apart, is in the
    dtype of the input handed to it: two observations of one call."""
    for r in _mixed(runs, backend):
        for case, result in r.cases.items():
            assert result["error"] is None, (r.version, case, result["error"])
            if not result["calls"]:
                continue
            allowed = {_compute_dtype(case.split("_", 1)[1]), "float32"}
            assert result["input"] in allowed and set(result["others"]) <= allowed, \
                (r.version, case)
            if backend == "tensorflow":
                assert result["ops"] in ([f"CudnnRNN {result['input']}"],
                                         [f"CudnnRNNV3 {result['input']}"]), (r.version, case)


def test_keras_cudnn_function_on_pytorch_fails_under_float32_where_the_cases_say(runs):
    """PyTorch backend: the body of Keras's cuDNN function under float32 runs or fails as the
    release's record of the cases (snippets/versions/keras3_torch.py, run apart) found; where it
    fails under float32, it fails with the same error under the mixed policies."""
    for r in _mixed(runs, "torch"):
        [plain] = [p for p in runs if p.backend == "torch" and not p.topic
                   and p.version == r.version and p.nightly == r.nightly]
        for kind in ("lstm", "gru"):
            result = r.cases[f"{kind}_float32"]
            if not result["calls"]:
                continue
            body = plain.cases[f"{kind}_cudnn_body"]["body"]
            assert result["body"].startswith("runs") == (body == "runs"), (r.version, kind)
            if body != "runs":
                assert result["body"].split(":")[0] == body.split(":")[0], (r.version, kind)
                for policy in ("mixed_float16", "mixed_bfloat16"):  # what the page says
                    assert r.cases[f"{kind}_{policy}"]["body"] == result["body"], \
                        (r.version, kind, policy)


def test_tf_keras_builds_its_cudnn_op_in_the_policys_compute_dtype(runs):
    for r in _mixed(runs, "tf-keras"):
        for case, result in r.cases.items():
            dtype = _compute_dtype(case.split("_", 1)[1])
            assert result["error"] is None, (r.version, case)
            assert {c.split()[1] for c in result["calls"]} == {dtype}, (r.version, case)
            assert any(c.startswith("CudnnRNN") and "Backprop" not in c for c in result["calls"])


def test_the_kernel_registry_of_the_installed_tensorflow_is_the_records(runs):
    """The GPU kernels the project's TensorFlow registers, listed here through the registry of
    every kernel (not the per-op query the snippets use), are the record of that release."""
    tf = pytest.importorskip("tensorflow")
    from tensorflow.python.framework import kernels
    found = {"CudnnRNN": set(), "CudnnRNNV3": set()}
    for k in kernels.get_all_registered_kernels().kernel:
        if k.op in found and k.device_type == "GPU":
            found[k.op] |= {tf.as_dtype(t).name for c in k.constraint
                            for t in c.allowed_values.list.type}
    assert found["CudnnRNNV3"], "this TensorFlow carries no GPU kernel of CudnnRNNV3"
    recorded = [r.extra["gpu_kernels"] for r in runs if r.topic == MIXED
                and r.extra.get("tensorflow") == tf.__version__]
    assert recorded, f"no record of TensorFlow {tf.__version__}"
    for kernels_on_record in recorded:
        assert {op: set(d) for op, d in kernels_on_record.items()} == found


def test_the_pinned_jax_record_agrees_with_the_criteria_pages_program(runs):
    """The criteria page's JAX program asks the project's Keras and jaxlib by another route (its
    own GPU pretence): its lines and the record of the same release say the same."""
    r = _pinned(runs, "jax")
    shown = printed("criteria/jax_backend/mixed_precision.py")
    for policy in ("float32", "mixed_float16", "mixed_bfloat16"):
        m = re.search(rf"^{policy} +Keras asks cuDNN for (\w+) +jaxlib accepts it: (.+)$", shown,
                      re.M)
        case = r.cases[f"lstm_{policy}"]
        assert m and (case["input"], case["jaxlib_accepts"]) == m.groups(), (policy, shown)


def _pinned(runs, backend):
    import keras
    [r] = [r for r in vc.keras_runs(runs, backend, MIXED) if r.version == keras.__version__]
    return r


def test_the_pinned_torch_and_tensorflow_records_agree_with_the_criteria_pages_programs(runs):
    """The criteria page's programs ask the project's Keras (and tf-keras) by another route
    (their own GPU pretence): their lines and the records of the same releases say the same."""
    torch_shown = printed("criteria/torch_backend/mixed_precision.py")
    tf_shown = printed("criteria/tf_backend/mixed_precision.py")
    torch_run, tf_run = _pinned(runs, "torch"), _pinned(runs, "tensorflow")
    import tf_keras
    [tfk_run] = [r for r in vc.keras_runs(runs, "tf-keras", MIXED)
                 if r.version == tf_keras.__version__]
    for policy in ("float32", "mixed_float16", "mixed_bfloat16"):
        m = re.search(rf"^{policy} +Keras asks cuDNN for LSTM: (\w+) +GRU: (\w+)$", torch_shown,
                      re.M)
        assert m and m.groups() == (torch_run.cases[f"lstm_{policy}"]["input"],
                                    torch_run.cases[f"gru_{policy}"]["input"]), policy
        m = re.search(rf"^{policy} +Keras 3: cuDNN, (\w+) +tf-keras: (\w+), (\w+)$", tf_shown,
                      re.M)
        assert m, (policy, tf_shown)
        assert m[1] == tf_run.cases[f"lstm_{policy}"]["input"]
        assert f"{m[2]} {m[3]}" in tfk_run.cases[f"lstm_{policy}"]["calls"]
    m = re.search(r"has GPU kernels of CudnnRNNV3 for: (.+)$", tf_shown, re.M)
    assert m and m[1].split(", ") == tf_run.extra["gpu_kernels"]["CudnnRNNV3"]


@pytest.mark.parametrize("cell,backend", [("pinned-mixed-precision-tensorflow", "tensorflow"),
                                          ("pinned-mixed-precision-jax", "jax"),
                                          ("pinned-mixed-precision-torch", "torch"),
                                          ("pinned-tf-keras-mixed-precision", "tf-keras")])
def test_the_pinned_cell_runs_offline_and_matches_its_release(tmp_path, runs, cell, backend):
    """CPU CI's cells: the project's own Keras (or tf-keras) answers now what the record of its
    release says: the other releases' records were made the same way."""
    made = tmp_path / "records"
    assert versions.main(["--root", str(REPO), "--results", str(made), "--cache",
                          str(tmp_path / "cache"), "--only", cell]) == 0
    [run] = vc.load(made, SNIPPETS)
    assert run.topic == MIXED and not run.stale
    [recorded] = [r for r in vc.keras_runs(runs, backend, MIXED) if r.version == run.version]
    assert run.cases == recorded.cases and run.extra.get("gpu_kernels") == \
        recorded.extra.get("gpu_kernels")


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch", "tf-keras"])
def test_each_release_sits_in_a_row_of_the_table_that_shows_its_own_answers(runs, backend):
    for lang in ("en", "es"):
        lines = vc.mixed_precision_table(runs, backend, lang).splitlines()
        rows = [l for l in lines if l.startswith("| ") and "---" not in l][1:]
        groups, current = {}, None
        for row in rows:
            cells = [c.strip() for c in row.strip("|").split("|")]
            if cells[0]:
                current = cells[0].rstrip("*")
                groups[current] = {}
            groups[current][cells[1].strip("`")] = cells[2:]
        for r in _mixed(runs, backend):
            def holds(g):  # "3.0.0 to 3.1.1" holds the releases between, a nightly its name
                span = re.fullmatch(rf"(\S+) {vc.WORDS[lang]['to']} (\S+)", g)
                if r.nightly or not span:
                    return g in (vc.run_name(r, lang), r.version)
                return vc._key(span[1]) <= vc._key(r.version) <= vc._key(span[2])
            [name] = [g for g in groups if holds(g)]
            for policy, (lstm, gru) in groups[name].items():
                assert lstm == vc.mixed_answer(r.cases[f"lstm_{policy}"], lang), (r.version, lang)
                assert gru == vc.mixed_answer(r.cases[f"gru_{policy}"], lang), (r.version, lang)


def test_the_numbers_page_draws_the_tables_and_shows_the_programs_in_both_languages():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for backend in ("tensorflow", "jax", "torch", "tf-keras"):
            assert f"<!-- mixed-precision-table: {backend} -->" in text, (page.name, backend)
        assert "<!-- tf-cudnn-kernels-table -->" in text
        for rel in ["versions/_mixed_precision.py", "versions/tf_keras_mixed_precision.py"] + [
                f"versions/keras3_mixed_precision_{b}.py" for b in ("tensorflow", "jax", "torch")]:
            assert f'--8<-- "{rel}"' in text, (page.name, rel)
