"""The Keras 2 to Keras 3 table (docs/legacy.md#keras2-keras3-table) against the installed
packages, asked here independently of pipeline/claims/keras_migration.py's own probe: every
argument one constructor's signature names and the other's does not is in the table (or the
other takes it through **kwargs, with the same default), each error shown is the one the package
raises, and each member the table says one package lacks is missing there. The round-trip
program's outcomes are checked against the file it saved and the layer that reads it."""
from __future__ import annotations

import contextlib
import inspect
import io
import json
import logging
import os
import runpy
import warnings
from pathlib import Path

import h5py
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf_keras = pytest.importorskip("tf_keras")
keras = pytest.importorskip("keras")

from pipeline.claims import keras_migration as km  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LIBS = {"tf_keras": tf_keras.layers, "keras": keras.layers}


@pytest.fixture(scope="module")
def answer():
    return km.differences()


def _names(cls) -> set[str]:
    return {k for k, p in inspect.signature(cls.__init__).parameters.items()
            if k != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}


def _build(lib, name, **extra):
    return km._build(LIBS[lib], name, **extra)


def test_every_differing_signature_argument_is_in_the_table(answer):
    missing = []
    for name in km.CLASSES:
        sigs = {lib: _names(getattr(L, name)) for lib, L in LIBS.items()}
        for lib, other in (("tf_keras", "keras"), ("keras", "tf_keras")):
            for arg in sorted(sigs[lib] - sigs[other] - set(km.CLASSES[name])):
                if arg in answer["classes"][name]["arguments"]:
                    continue
                # Left out only where the other package takes it after all (through **kwargs).
                try:
                    _build(other, name, **{arg: km.SAMPLES.get(arg, False)})
                except Exception:  # noqa: BLE001
                    missing.append(f"{name}.{arg}")
    assert not missing, f"differing arguments missing from the table: {missing}"


def test_a_differing_default_is_in_the_table(answer):
    for name in km.CLASSES:
        params = {lib: inspect.signature(getattr(L, name).__init__).parameters
                  for lib, L in LIBS.items()}
        for arg in set(params["tf_keras"]) & set(params["keras"]) - {"self", "kwargs"}:
            a, b = params["tf_keras"][arg].default, params["keras"][arg].default
            if repr(a) != repr(b):
                assert arg in answer["classes"][name]["arguments"], f"{name}.{arg}: {a!r} {b!r}"


def test_each_refusal_is_the_error_the_package_raises(answer):
    seen = 0
    for name, c in answer["classes"].items():
        for arg, row in c["arguments"].items():
            for lib, side in row.items():
                if side["accepted"]:
                    continue
                with pytest.raises(Exception) as e:
                    _build(lib, name, **{arg: False})
                text = f"{type(e.value).__name__}: {' '.join(str(e.value).split())}"
                assert text.split(":")[:2] == side["error"].split(":")[:2], (name, arg, text)
                seen += 1
    assert seen >= 3  # time_major, use_cudnn, seed at least


def test_each_missing_member_is_missing(answer):
    for name, c in answer["classes"].items():
        for member, row in c["members"].items():
            for lib, side in row.items():
                if side.get("has"):
                    continue
                layer = _build(lib, name)
                assert not hasattr(layer, member), f"{lib} {name} has {member}"


def test_reset_states_takes_states_only_in_tf_keras(answer):
    for name in ("LSTM", "GRU", "Bidirectional"):
        k2 = inspect.signature(getattr(tf_keras.layers, name).reset_states).parameters
        k3 = inspect.signature(getattr(keras.layers, name).reset_states).parameters
        assert "states" in k2 and "states" not in k3
        assert answer["classes"][name]["members"]["reset_states"]["keras"]["params"] == []


def test_the_data_answers_every_difference_and_no_other(answer):
    data = km.load_data(ROOT / "data" / "keras_migration.yml")
    assert km.problems(answer, data) == []
    fewer = dict(data)
    fewer.pop("argument:time_major")
    assert any("argument:time_major" in p for p in km.problems(answer, fewer))
    more = dict(data, **{"argument:no_such": {"en": "x", "es": "x"}})
    assert any("argument:no_such" in p for p in km.problems(answer, more))


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_table_draws_every_difference(answer, lang):
    data = km.load_data(ROOT / "data" / "keras_migration.yml")
    page, problems = km.render("x\n<!-- keras-migration -->\n", lang, ROOT)
    assert problems == []
    for key in km.keys(answer):
        kind, name = key.split(":")
        assert f"| {km.WORDS[lang][kind]} `{name}` |" in page, key
        assert " ".join(data[key][lang].split()) in page


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory):
    """The round-trip program run in its own folder, in this process: it imports the Keras 3
    and tf-keras this module has imported already (a process of its own imported both, and
    TensorFlow, again). Its warning filter and log levels are put back afterwards."""
    folder = tmp_path_factory.mktemp("round_trip")
    loggers = {name: logging.getLogger(name).level for name in ("tensorflow", "absl")}
    out, cwd = io.StringIO(), os.getcwd()
    try:
        os.chdir(folder)
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            runpy.run_path(str(ROOT / "snippets/legacy/keras2_keras3_files.py"),
                           run_name="__main__")
    finally:
        os.chdir(cwd)
        for name, level in loggers.items():
            logging.getLogger(name).setLevel(level)
    lines = dict(line.strip().split(": ", 1) for line in out.getvalue().splitlines()
                 if ": " in line)
    return folder, lines


def test_tf_keras_h5_model_stops_at_time_major_in_keras3(round_trip):
    folder, lines = round_trip
    with h5py.File(folder / "k2_model.h5") as f:
        config = json.loads(f.attrs["model_config"])
    lstm = next(l for l in config["config"]["layers"] if l["class_name"] == "LSTM")["config"]
    assert "time_major" in lstm  # tf-keras writes it; Keras 3's LSTM refuses it
    with pytest.raises(ValueError) as e:
        keras.layers.LSTM.from_config(lstm)
    assert "time_major" in str(e.value)
    assert lines["save('.h5'), keras.models.load_model"].startswith(
        "ValueError: Unrecognized keyword arguments passed to LSTM: {'time_major'")


def test_weights_files_load_both_ways(round_trip):
    _, lines = round_trip
    weights = [k for k in lines if "load_weights" in k and not k.startswith("non-zero")]
    assert len(weights) == 7, lines
    assert all(lines[k] == "same outputs" for k in weights), lines
    assert not any(lines[k] == "same outputs" for k in lines if "load_model" in k), lines


def test_keras3_weights_find_a_subclassed_layer_by_its_class_name(round_trip):
    folder, lines = round_trip
    with h5py.File(folder / "sub3.weights.h5") as f:
        paths = []
        f.visit(paths.append)
    assert any(p.startswith("layers/encoder/") for p in paths), paths  # the class, snake_case
    assert lines["the same, its class renamed MyEncoder"].startswith(
        "ValueError: Layer 'lstm_cell' expected 3 variables, but received 0 variables")


def test_a_stateful_models_states_are_not_in_its_weights_file(round_trip):
    folder, lines = round_trip
    with h5py.File(folder / "stateful.h5") as f:
        names = []
        f.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset)
                     else None)
    lstm = sorted(n.rsplit("/", 1)[-1] for n in names if n.startswith("lstm/"))
    assert lstm == ["bias:0", "kernel:0", "recurrent_kernel:0"], names
    assert lines["non-zero states"] == "tf-keras [True, True], Keras 3 after load_weights [False, False]"
    assert lines["Keras 3 reset_states(states=...)"].startswith("TypeError: ")
    assert "reset_states" in lines["Keras 3 reset_states(states=...)"]


def test_a_fresh_clone_takes_the_committed_answer_only_for_the_key_it_was_made_for(
        tmp_path, monkeypatch):
    """results/outputs/keras_migration.json spares a fresh clone's build the packages' import;
    the tests above ask the packages again for everything it lists."""
    monkeypatch.setattr(km, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(km, "COMMITTED", tmp_path / "keras_migration.json")
    asked = []
    monkeypatch.setattr(km.subprocess, "run", lambda *a, **k: asked.append(a) or pytest.fail(
        "asked the packages"))
    km.COMMITTED.write_text(json.dumps({"key": km.cache_key(), "answer": {"classes": {}}}))
    assert km.differences() == {"classes": {}} and not asked
    assert json.loads((km.CACHE / f"{km.cache_key()}.json").read_text()) == {"classes": {}}
    km.COMMITTED.write_text(json.dumps({"key": "2.0.0-3.0.0-000000000000",
                                        "answer": {"classes": {}}}))
    (km.CACHE / f"{km.cache_key()}.json").unlink()
    with pytest.raises(pytest.fail.Exception):
        km.differences()
    assert asked
