"""The checker's last blind spots, each judged by the library's own decision, in both directions.

- Keras 3.15's fused Bidirectional: on JAX and PyTorch (tests/blind_spots_keras3.py, one process
  per backend, judged by the criteria pages' _pretend_gpu helpers) and on TensorFlow, which has
  no fused call (the same script's cases, in this process).
- Masks through TimeDistributed on tf-keras: tf-keras's own gpu_lstm/standard_lstm choice, with
  a GPU pretended through tf.config.list_logical_devices.
- PyTorch RNNs that are not an nn.RNN module (torch.export graphs, torch._VF.lstm and
  torch.lstm called with the module's own parameters, torch.ao.nn.quantizable.LSTM, loops over
  cells or gates): the ops PyTorch runs, seen by its profiler. The fused RNN ops ask cuDNN's
  test (aten::cudnn_is_acceptable) on every call, which on a GPU with a CUDA input says yes; a
  loop over gates or cells never asks it.
- Models not built yet, checked on the reader's batch (TensorFlow backend and tf-keras here;
  JAX and PyTorch in the script above): the library's decision on that batch once the model is
  built, which the checker must not confuse with Keras's own building call.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "snippets"))
sys.path.insert(0, str(REPO / "tests"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402  (the TensorFlow backend, as in tests/content/test_checker_probe.py)
import tf_keras  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import blind_spots_keras3  # noqa: E402  (its TensorFlow cases; sets up the criteria helper)
import cudnn_check  # noqa: E402
import torch_rnn_cases  # noqa: E402
from torch_rnn_cases import NAMES, X  # noqa: E402
from _pretend_gpu import pretend_gpu  # noqa: E402  (snippets/criteria/tf_backend, not the checker)

SCRIPT = REPO / "tests" / "blind_spots_keras3.py"


# ----------------------------------------------------------------- unbuilt models, masks
class _Recommender(keras.Model):
    """Embedding(mask_zero=True) then GRU(dropout=0.5): not built until its first call."""
    def __init__(self, **gru):
        super().__init__(name="rec")
        self.embed = keras.layers.Embedding(50, 8, mask_zero=True)
        self.gru = keras.layers.GRU(8, dropout=0.5, **gru)
        self.head = keras.layers.Dense(1)

    def call(self, x, training=False):
        return self.head(self.gru(self.embed(x), training=training))


def _padded(padding):
    return keras.utils.pad_sequences([[3, 7, 2], [5, 1], [4, 4, 4, 9]], maxlen=6,
                                     padding=padding)


@pytest.mark.parametrize("padding,gru", [("post", {}), ("pre", {}),
                                         ("post", {"recurrent_dropout": 0.2})])
def test_unbuilt_subclassed_model_is_judged_on_the_readers_batch(padding, gru):
    """Keras builds the model by calling it on symbolic inputs first; only the call on the
    reader's batch decides. The judge asks Keras on the same batch once the model is built."""
    model, x = _Recommender(**gru), _padded(padding)
    assert not model.built
    report = cudnn_check.check_model(model, sample=x)
    with pretend_gpu() as calls:
        model(x)
    assert report.probe.endswith("on your sample, with a GPU pretended"), report.probe
    assert (report == []) == (calls == ["gru"]), ([str(f) for f in report], calls)
    assert all("cannot name" not in f.message for f in report), [str(f) for f in report]


@contextlib.contextmanager
def _tf_keras_pretend_gpu():
    """tf-keras believes a GPU is listed. Its eager LSTM/GRU then calls gpu_lstm/gpu_gru, or
    standard_lstm/standard_gru where it refuses cuDNN (a mask that is not right-padded, an
    empty row); both are counted, and the GPU call is answered with the standard one."""
    lstm = importlib.import_module("tf_keras.src.layers.rnn.lstm")
    gru = importlib.import_module("tf_keras.src.layers.rnn.gru")
    config = lstm.tf.config
    saved = (config.list_logical_devices, lstm.gpu_lstm, gru.gpu_gru, lstm.standard_lstm,
             gru.standard_gru)
    real_list, standard = config.list_logical_devices, {"lstm": saved[3], "gru": saved[4]}
    calls = []

    def counted(kind, gpu):
        def call(**kwargs):
            calls.append(("gpu_" if gpu else "standard_") + kind)
            if gpu:
                kwargs["zero_output_for_mask"] = True
            return standard[kind](**kwargs)
        return call
    config.list_logical_devices = lambda t=None: ["GPU"] if t == "GPU" else real_list(t)
    lstm.gpu_lstm, gru.gpu_gru = counted("lstm", True), counted("gru", True)
    lstm.standard_lstm, gru.standard_gru = counted("lstm", False), counted("gru", False)
    try:
        yield calls
    finally:
        (config.list_logical_devices, lstm.gpu_lstm, gru.gpu_gru, lstm.standard_lstm,
         gru.standard_gru) = saved


def _time_distributed_batch(where):
    """(batch 2, 3 inner sequences, 5 steps, 4 features), zero frames where asked."""
    x = np.ones((2, 3, 5, 4), "float32")
    if where == "middle":  # a frame of zeros in the middle of one inner sequence
        x[0, 1, 2] = 0
    elif where == "end":  # zeros at the end of inner sequences: right-padded
        x[0, 1, 3:] = 0
        x[1, 2, 4:] = 0
    elif where == "all":  # one inner sequence all zeros
        x[1, 0] = 0
    return x


@pytest.mark.parametrize("where", ["middle", "end", "all"])
@pytest.mark.parametrize("mask_source", ["masking", "time_distributed_masking"])
def test_tf_keras_masks_through_time_distributed(where, mask_source):
    L = tf_keras.layers
    inp = tf_keras.Input((3, 5, 4))
    masked = (L.Masking(0.0)(inp) if mask_source == "masking"
              else L.TimeDistributed(L.Masking(0.0))(inp))
    model = tf_keras.Model(inp, L.TimeDistributed(L.LSTM(3, name="enc"), name="td")(masked),
                           name="m")
    x = _time_distributed_batch(where)
    with _tf_keras_pretend_gpu() as calls:
        model(x)
    assert calls, "tf-keras made no LSTM call the judge could see"
    library = set(calls) == {"gpu_lstm"}
    report = cudnn_check.check_model(model, sample=x)
    assert report.probe.startswith("asked tf-keras"), report.probe
    assert (report == []) == library, (where, calls, [str(f) for f in report])
    if not library:
        assert {f.criterion for f in report} <= {"mask_right_padded", "mask_fully_masked"}


def test_tf_keras_time_distributed_cases_go_both_ways():
    """The cases above include one tf-keras sends to cuDNN and some it does not."""
    L = tf_keras.layers
    inp = tf_keras.Input((3, 5, 4))
    model = tf_keras.Model(inp, L.TimeDistributed(L.LSTM(3))(L.Masking(0.0)(inp)))
    seen = set()
    for where in ("middle", "end", "all"):
        with _tf_keras_pretend_gpu() as calls:
            model(_time_distributed_batch(where))
        seen.add(set(calls) == {"gpu_lstm"})
    assert seen == {True, False}


class _Keras2Recommender(tf_keras.Model):
    def __init__(self):
        super().__init__(name="rec")
        self.embed = tf_keras.layers.Embedding(50, 8, mask_zero=True)
        self.gru = tf_keras.layers.GRU(8, dropout=0.5)

    def call(self, x, training=False):
        return self.gru(self.embed(x), training=training)


@pytest.mark.parametrize("padding", ["post", "pre"])
def test_tf_keras_unbuilt_subclassed_model(padding):
    model, x = _Keras2Recommender(), _padded(padding)
    report = cudnn_check.check_model(model, sample=x)
    with _tf_keras_pretend_gpu() as calls:
        model(x)
    assert report.probe.endswith("on your sample, with a GPU pretended"), report.probe
    assert (report == []) == (calls == ["gpu_gru"]), ([str(f) for f in report], calls)


# ----------------------------------------------------------------- PyTorch
@functools.lru_cache(maxsize=None)
def _modules():
    """Built once: torch.export takes a second or two."""
    return torch_rnn_cases.modules()


def _asks_cudnn(module) -> bool:
    """PyTorch's own answer: does the forward run an op that asks cuDNN's test?"""
    run = module.module() if isinstance(module, torch.export.ExportedProgram) else module
    with torch.autograd.profiler.profile() as prof, torch.no_grad():
        run(X)
    ops = {e.name for e in prof.function_events}
    assert ops & {"aten::lstm", "aten::gru", "aten::lstm_cell", "aten::linear"}, ops
    return "aten::cudnn_is_acceptable" in ops


def _eligible_on_a_gpu(findings) -> bool:
    """The checker found the RNN, and nothing but this machine (parameters and input on the
    CPU) keeps it from cuDNN."""
    return bool(findings) and {f.criterion for f in findings} == {"device"}


@pytest.mark.parametrize("name", NAMES)
def test_pytorch_rnns_that_are_not_nn_rnn_modules(name):
    module = _modules()[name]
    library = _asks_cudnn(module)
    samples = [None] if isinstance(module, (torch.export.ExportedProgram, torch.fx.GraphModule)) \
        else [None, X]
    for sample in samples:
        found = cudnn_check.check_module(module, sample=sample)
        assert found, (name, sample is not None)  # never silence
        if sample is None and {f.criterion for f in found} == {"cannot_inspect"}:
            assert not library and "sample=" in found[0].fix  # it says what to pass
            continue
        assert _eligible_on_a_gpu(found) == library, (name, [str(f) for f in found])
        if not library:
            assert {f.criterion for f in found} <= {"gate_loop", "cell_loop"}, found


def test_pytorch_cases_go_both_ways_and_loops_need_a_sample_to_be_seen():
    verdicts = {name: _asks_cudnn(m) for name, m in _modules().items()}
    assert set(verdicts.values()) == {True, False} and list(verdicts) == NAMES, verdicts
    # A Python loop over time cannot be traced without an input: the checker says so, and
    # with the reader's batch it sees the loop.
    loop = torch_rnn_cases.GateLoop()
    assert [f.criterion for f in cudnn_check.check_module(loop)] == ["cannot_inspect"]
    found = cudnn_check.check_module(loop, sample=X)
    assert [(f.layer, f.criterion) for f in found] == [("GateLoop", "gate_loop")]
    assert "5 times" in found[0].message  # one call per time step of the batch


def test_check_module_leaves_the_module_as_it_was():
    module = nn.Sequential(torch_rnn_cases.OwnLSTM(), nn.Dropout(0.5))
    module.train()
    before = {k: v.clone() for k, v in module.state_dict().items()}
    cudnn_check.check_module(module, sample=X)
    assert all(m.training for m in module.modules())
    assert all(torch.equal(before[k], v) for k, v in module.state_dict().items())
    assert not torch.nn.modules.module._global_forward_hooks
    assert not torch.nn.modules.module._global_forward_pre_hooks


# ----------------------------------------------------------------- fused Bidirectional
@pytest.fixture(scope="module", autouse=True)
def _started():
    """JAX and PyTorch, each in its own process, started with this module's first test so that
    they run while the other tests do (their tests come last)."""
    procs = {b: subprocess.Popen([sys.executable, "-W", "ignore", str(SCRIPT)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 cwd=REPO, env={**os.environ, "KERAS_BACKEND": b,
                                                "TF_CPP_MIN_LOG_LEVEL": "3"})
             for b in ("jax", "torch")}
    yield procs
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.fixture(scope="module")
def other_backends(_started):
    procs, out = _started, {}
    for backend, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0 and stdout.strip(), stderr[-3000:]
        report = json.loads(stdout.strip().splitlines()[-1])
        assert report["backend"] == backend
        out[backend] = report["cases"]
    return out


def _assert_agrees(cases):
    for case in cases:
        assert case["probe"].startswith("asked"), case
        # a context around the call is seen only where the layer runs, by the probe
        for how in ("sample",) if case.get("outside") else ("sample", "static"):
            assert (case[how] == []) == case["library_takes_cudnn"], (how, case)
    verdicts = {c["library_takes_cudnn"] for c in cases}
    assert verdicts == {True, False}, cases  # the comparison can fail either way


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_fused_bidirectional_is_judged_as_the_backend_decides(other_backends, backend):
    cases = other_backends[backend]
    _assert_agrees(cases)
    # The fused call decides from the forward layer: a backward layer with unroll=True, which
    # alone would fall back, runs on cuDNN with it. The case must keep testing that.
    fused = {c["case"]: c for c in cases}["backward unroll=True"]
    assert fused["library_takes_cudnn"], fused
    # Decided outside the layer's arguments (#60): the mask a subclassed model passes to a layer
    # built with use_cudnn=True (Keras raises), and on PyTorch its cuDNN switch and
    # torch.compile. The library refuses cuDNN in each, and the checker names what decided.
    expected = {"mask from a subclassed model, use_cudnn=True": "use_cudnn_raises"}
    if backend == "torch":
        expected.update({f"{k}, compile(jit_compile=True)": "compiled" for k in ("LSTM", "GRU")})
        expected.update({f"{k} under cudnn.flags(enabled=False)": "cudnn_disabled"
                         for k in ("LSTM", "GRU")})
    off = {c["case"]: c for c in cases if c.get("outside")}
    assert set(off) == set(expected), sorted(off)
    for name, criterion in expected.items():
        assert not off[name]["library_takes_cudnn"], off[name]
        assert [f for _, f in off[name]["sample"]] == [criterion], off[name]
    # Where the library took cuDNN, the contexts the check cannot see are named as conditions.
    taken = [c for c in cases if c["library_takes_cudnn"]]
    assert taken and all(any(n.startswith("Condition:") for n in c["conditions"])
                         for c in taken)
    if backend == "torch":
        assert all(any("cudnn.flags(enabled=False)" in n for n in c["conditions"])
                   for c in taken)
    # A layer's own cuDNN call (not the fused Bidirectional one) costs a weight copy on PyTorch:
    # Keras packs its weights into separate tensors (its own prepare_*_params, asked by the
    # probe); the GPU's answer is test_keras_on_pytorch_compacts_its_weights_on_a_gpu below.
    own = {c["case"]: c for c in taken}["unbuilt subclassed LSTM"]
    assert [f for _, f in own["costs"]] == (["weights_not_flat"] if backend == "torch" else [])



def test_tensorflow_has_no_fused_call_and_unbuilt_models_count_the_readers_call():
    cases = blind_spots_keras3.judge_cases()
    _assert_agrees(cases)
    # Without a fused call, the backward layer's own unroll=True keeps it off cuDNN.
    assert not {c["case"]: c for c in cases}["backward unroll=True"]["library_takes_cudnn"]


# ----------------------------------------------------------------- every other PyTorch RNN
def _cudnn_asks(module) -> int:
    """How many times PyTorch asked cuDNN's test (aten::cudnn_is_acceptable) in one forward:
    once per call of a fused RNN op (nn.LSTM, nn.GRU, nn.RNN, torch._VF.lstm), which on a GPU
    with a CUDA input then runs cuDNN; never for a cell step, a hand-written loop or a quantized
    kernel."""
    with torch.autograd.profiler.profile() as prof, torch.no_grad():
        module(X)
    return sum(e.name == "aten::cudnn_is_acceptable" for e in prof.function_events)


def _part_findings(found, k):
    return [f for f in found if f.layer == f"parts.{k}" or f.layer.startswith(f"parts.{k}.")]


def _disagreements(cases, check) -> tuple[list, list]:
    """Where `check` (check_module or a wrong copy of it) disagrees with PyTorch, and PyTorch's
    verdict on each module. On the reader's batch: on the whole module (every recurrent part
    asks cuDNN, or not), and on each part when it is alone. Without a batch (the checker then
    traces forward, or cannot): never all eligible where PyTorch says otherwise."""
    out, verdicts = [], []
    for name, module, kinds in cases:
        asks = _cudnn_asks(module)
        parts = sum(k is not None for k in kinds)
        verdicts.append(asks >= parts)
        found = check(module, sample=X)
        named = all(_part_findings(found, k) for k, kind in enumerate(kinds) if kind)
        eligible = bool(found) and {f.criterion for f in found} == {"device"} and named
        per_part = parts > 1 or all(
            ({f.criterion for f in _part_findings(found, k)} == {"device"}) == (asks >= 1)
            for k, kind in enumerate(kinds) if kind)
        not_rnn = all(not _part_findings(found, k) for k, kind in enumerate(kinds) if not kind)
        traced = check(module)
        traced_eligible = bool(traced) and {f.criterion for f in traced} == {"device"}
        if eligible != (asks >= parts) or not named or not per_part or not not_rnn or (
                traced_eligible and asks < parts):
            out.append((name, asks, [(f.layer, f.criterion) for f in found],
                        [(f.layer, f.criterion) for f in traced]))
    return out, verdicts


@functools.lru_cache(maxsize=None)
def _generated():
    return torch_rnn_cases.generated(28, seed=0)  # two rounds of every kind


def test_every_pytorch_recurrent_module_gets_pytorchs_own_verdict():
    """nn.RNN (tanh, relu), nn.LSTM, nn.GRU, their cells stepped in a loop, hand-written RNNs
    and GRUs, the quantizable and dynamically quantized ones, torch._VF.lstm; alone, in pairs,
    beside a loop that is not recurrent. PyTorch's profiler decides: the checker, given the same
    batch, must name every recurrent part, find the module eligible on a GPU exactly when every
    part asks cuDNN, give a part alone PyTorch's answer, and name no part that is not
    recurrent."""
    cases = _generated()
    assert {k for *_, kinds in cases for k in kinds} >= set(torch_rnn_cases.PART_KINDS) | {None}
    wrong, verdicts = _disagreements(cases, cudnn_check.check_module)
    assert wrong == []
    assert set(verdicts) == {True, False}, verdicts  # the comparison can fail either way


def test_a_checker_blind_to_hand_written_rnns_is_caught():
    """The checker before #43 saw no loop of a plain tanh or relu step: the same comparison
    catches it."""
    real_loop = cudnn_check._Events.loop

    def gates_only(events, recurrent=frozenset()):  # the rule before #43
        found = real_loop(events, frozenset())
        return found if found and not found[2] else None
    cudnn_check._Events.loop = gates_only
    try:
        wrong, _ = _disagreements(_generated(), cudnn_check.check_module)
    finally:
        cudnn_check._Events.loop = real_loop
    assert any("hand-written tanh RNN" in name for name, *_ in wrong), wrong


# ----------------------------------------------------------------- a note is not a fallback
class _CudaLooking(torch.Tensor):
    """A CPU tensor that says it is on a GPU (the checker's probe does the same for Keras)."""
    @property
    def device(self):
        return torch.device("cuda", 0)


def _on_a_pretended_gpu(lstm, flat: bool):
    """The weights the module hands PyTorch (_flat_weights), said to be on a GPU: in one buffer
    (as flatten_parameters() leaves them on a GPU) or each in its own."""
    weights = [w.detach() for w in lstm._flat_weights]
    if flat:
        buffer = torch.cat([w.reshape(-1) for w in weights])
        sizes = [w.numel() for w in weights]
        weights = [v.view_as(w) for v, w in zip(buffer.split(sizes), weights)]
    lstm._flat_weights = [w.as_subclass(_CudaLooking) for w in weights]
    return lstm


def _cudnn_question(lstm) -> list:
    """PyTorch's own question before an RNN call runs: the arguments of each
    aten::cudnn_is_acceptable it asks (their shapes), from its profiler."""
    with torch.autograd.profiler.profile(record_shapes=True) as prof, torch.no_grad():
        lstm(X)
    return [e.input_shapes for e in prof.function_events if e.name == "aten::cudnn_is_acceptable"]


def test_weights_outside_one_buffer_are_a_cost_not_a_fallback():
    """PyTorch decides whether an RNN call takes cuDNN from its input alone: the profiler shows
    aten::cudnn_is_acceptable asked once per call with one argument, the input, whether the
    weights are in one buffer or not (on a GPU the call then copies them, and warns: a cost).
    So the checker may name the weights, but its verdict must stay on cuDNN."""
    flat_lstm, split_lstm = (nn.LSTM(3, 4, num_layers=2, batch_first=True) for _ in range(2))
    with torch.no_grad():
        split_lstm.weight_hh_l0 = nn.Parameter(split_lstm.weight_hh_l0.clone())
    asked = _cudnn_question(flat_lstm)
    assert asked == [[list(X.shape)]] and _cudnn_question(split_lstm) == asked, asked
    flat, split = (cudnn_check.check_module(_on_a_pretended_gpu(m, f))
                   for m, f in ((flat_lstm, True), (split_lstm, False)))
    assert flat == [] and cudnn_check.verdict(flat) == "runs cuDNN"
    assert [f.criterion for f in split] == ["weights_not_flat"], [str(f) for f in split]
    assert cudnn_check.verdict(split) == "runs cuDNN, with a cost"
    # what does change PyTorch's answer (an input it refuses) is not a cost
    with torch.backends.cudnn.flags(enabled=False):
        off = cudnn_check.check_module(_on_a_pretended_gpu(nn.LSTM(3, 4), True))
    assert cudnn_check.verdict(off) == "does not run cuDNN", [str(f) for f in off]


# ----------------------------------------------------------------- a loop is not a recurrence
def _recurs(module) -> bool:
    """The reference: autograd says whether the output's last time step (the output itself when
    it has no time axis) depends on the first step's input, which only a state carried from
    step to step can do in these loops."""
    x = X.clone().requires_grad_(True)
    out = module(x)
    last = out[:, -1] if out.dim() == 3 else out
    (grad,) = torch.autograd.grad(last.sum(), x)
    return bool(grad[:, 0].abs().sum() > 0)


@pytest.mark.parametrize("cls", ["PerStep", "GatedPerStep", "Elman", "GateLoop"])
def test_a_loop_is_not_a_recurrence(cls):
    """A Python loop over time steps is a hand-written RNN only when a step uses what an earlier
    step computed. A layer applied to each frame, or a gated score per step (sigmoid and tanh,
    as an LSTM's gates), is not one, beside an LSTM or alone; autograd decides which is which."""
    loop = getattr(torch_rnn_cases, cls)()
    recurs = _recurs(loop)
    assert recurs == (cls in ("Elman", "GateLoop"))  # the cases keep testing both ways
    module = torch_rnn_cases.Parts([loop, torch_rnn_cases.Whole(nn.LSTM(3, 4, batch_first=True))])
    found = cudnn_check.check_module(module, sample=X)
    on_the_loop = [f.criterion for f in _part_findings(found, 0)]
    assert on_the_loop == (["gate_loop"] if recurs else []), [str(f) for f in found]
    assert [f.criterion for f in _part_findings(found, 1)] == ["device"]  # the LSTM: PyTorch's


# ----------------------------------------------------------------- decisions outside the layer
class _Scoped(tf_keras.Model):
    """A tf-keras model whose call runs its LSTM inside a device scope (or none)."""
    def __init__(self, scope):
        super().__init__(name="m")
        self.lstm, self.scope = tf_keras.layers.LSTM(3, name="enc"), scope

    def call(self, x):
        if self.scope is None:
            return self.lstm(x)
        import tensorflow as tf
        with tf.device(self.scope):
            return self.lstm(x)


@pytest.mark.parametrize("scope", [None, "/CPU:0"])
def test_tf_keras_device_scope_inside_the_models_call(scope):
    """tf-keras reads the device scope open where the layer runs (get_context_device_type): a
    tf.device("/CPU:0") in the model's call sends the layer to its generic kernel on any GPU.
    The judge lists a GPU and lets tf-keras's own device logic run; the checker's probe must
    see the scope where the layer runs, and say what decided."""
    model, x = _Scoped(scope), np.ones((2, 5, 4), "float32")
    with _tf_keras_pretend_gpu() as calls:
        model(x)
    library = calls == ["gpu_lstm"]
    assert library == (scope is None), calls  # the cases go both ways
    report = cudnn_check.check_model(model, sample=x)
    assert (report == []) == library, [str(f) for f in report]
    if not library:
        assert [f.criterion for f in report] == ["device_scope"], [str(f) for f in report]
        assert report.layers[0][2].startswith("does not run cuDNN"), report.layers


class _SwitchedOff(nn.Module):
    """nn.LSTM, or torch._VF.lstm with a module's own weights, run inside
    torch.backends.cudnn.flags(enabled=False) in forward, or not."""
    def __init__(self, inner, off: bool):
        super().__init__()
        self.inner, self.off = inner, off

    def forward(self, x):
        with torch.backends.cudnn.flags(enabled=not self.off):
            out = self.inner(x)
        return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("off", [False, True])
@pytest.mark.parametrize("inner", ["nn.LSTM", "torch._VF.lstm"])
def test_cudnn_switched_off_inside_forward(inner, off):
    """PyTorch reads its cuDNN switch (torch.backends.cudnn.enabled, the first thing
    at::cudnn_is_acceptable reads) at each RNN call. The judge reads it where PyTorch does, as
    the RNN runs (a forward pre-hook on it); on a GPU, tests/content/test_cudnn_check_gpu.py
    checks that aten::_cudnn_rnn then does not run. The checker, given a batch, must see a
    switch thrown inside forward, which the module's class does not show."""
    rnn = nn.LSTM(3, 4, batch_first=True) if inner == "nn.LSTM" else torch_rnn_cases.OwnLSTM()
    module, seen = _SwitchedOff(rnn, off), []
    hook = rnn.register_forward_pre_hook(lambda m, a: seen.append(torch.backends.cudnn.enabled))
    try:
        module(X)
    finally:
        hook.remove()
    assert seen and all(seen) == (not off), seen  # the cases go both ways
    found = cudnn_check.check_module(module, sample=X)
    criteria = {f.criterion for f in found}
    assert ("cudnn_disabled" in criteria) == off, [str(f) for f in found]
    assert criteria - {"cudnn_disabled"} == {"device"}, [str(f) for f in found]  # the CPU here


# ----------------------------------------------------------------- the compile step
def _dynamo_graph_ops(module) -> set:
    """The judge: the ops torch.compile's Dynamo hands its compiler (a recording backend), with
    the Dynamo settings in force."""
    import torch._dynamo as dynamo
    ops = set()

    def record(gm, example_inputs):
        ops.update(getattr(n.target, "__name__", str(n.target))
                   for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward
    dynamo.reset()
    try:
        with torch.no_grad():
            torch.compile(module, backend=record)(X)
    finally:
        dynamo.reset()
    return ops


def _inductor_loops_it_on_a_gpu() -> bool:
    """Inductor (torch.compile's default compiler) decomposes aten.lstm, and for a CUDA input
    torch._decomp picks its per-step LSTM, not mkldnn's kernel: asked with a CUDA-looking
    input."""
    from torch._decomp import decompositions
    from torch._inductor.decomposition import select_decomp_table
    x = X.transpose(0, 1).contiguous().as_subclass(_CudaLooking)
    h = torch.zeros(1, 2, 4).as_subclass(_CudaLooking)
    params = [[p.as_subclass(_CudaLooking) for p in nn.LSTM(3, 4).parameters()]]
    chosen = decompositions.select_one_layer_lstm_function(x, (h, h), params)
    return torch.ops.aten.lstm.input in select_decomp_table() and \
        chosen is decompositions.one_layer_lstm


@pytest.mark.parametrize("allow_rnn", [False, True])
@pytest.mark.parametrize("sample", [None, "batch"])
def test_torch_compile_with_allow_rnn(allow_rnn, sample):
    """torch.compile decides outside the module: by default Dynamo breaks its graph at nn.LSTM
    and runs it eagerly (cuDNN on a GPU); with torch._dynamo.config.allow_rnn = True the LSTM
    goes into the graph, and inductor rewrites it into per-step operations. Judged by Dynamo
    (which ops reach its compiler) and by inductor's own choice for a CUDA input."""
    import torch._dynamo as dynamo
    plain = torch_rnn_cases.Whole(nn.LSTM(3, 4, batch_first=True))
    compiled = torch.compile(plain)
    with dynamo.config.patch(allow_rnn=allow_rnn):
        in_graph = "lstm" in _dynamo_graph_ops(plain)
        found = cudnn_check.check_module(compiled, sample=None if sample is None else X)
    assert in_graph == allow_rnn and _inductor_loops_it_on_a_gpu()
    compiled_findings = [f for f in found if f.criterion == "compiled"]
    assert bool(compiled_findings) == in_graph, [str(f) for f in found]
    assert {f.criterion for f in found} - {"compiled"} <= {"device", "cannot_inspect"}
    if in_graph:
        assert cudnn_check.verdict(compiled_findings) == "does not run cuDNN"


class _Keras3Scoped(keras.Model):
    """A Keras 3 model (TensorFlow backend) whose call runs its LSTM inside a device scope."""
    def __init__(self):
        super().__init__(name="m")
        self.lstm = keras.layers.LSTM(3, name="enc")

    def call(self, x):
        import tensorflow as tf
        with tf.device("/CPU:0"):
            return self.lstm(x)


def test_keras3_tensorflow_device_scope_is_named_as_a_condition():
    """Keras 3 on TensorFlow does not read the device scope: with a GPU pretended it still calls
    cuDNN's op inside tf.device("/CPU:0") (the judge: the criteria pages' helper). Where
    TensorFlow then places that op is decided on a GPU, so the checker keeps Keras's answer and
    names the scope as a condition instead of guessing."""
    model, x = _Keras3Scoped(), np.ones((2, 5, 4), "float32")
    report = cudnn_check.check_model(model, sample=x)
    with pretend_gpu() as calls:
        model(x)
    assert calls == ["lstm"], calls
    assert report == [] and report.layers == [("m/enc", "LSTM", "uses cuDNN on a GPU")]
    assert any(c.startswith('Condition: m/enc ran inside tf.device("/CPU:0")')
               for c in report.conditions), report.conditions


def test_keras_on_pytorch_compacts_its_weights_on_a_gpu():
    """The GPU's answer, from the records of the criteria page's GPU program for Keras on
    PyTorch (run with the Keras installed here): its LSTM and GRU ran aten::_cudnn_rnn, and
    PyTorch warned from Keras's own cuDNN call that the weights are not in one buffer and are
    compacted on every call. So the checker's weights_not_flat for Keras on PyTorch is a cost of
    a call that runs cuDNN, as it reports it."""
    records = [p for p in sorted(REPO.glob(
        "results/*/snippets/criteria/torch_backend/on_gpu.py/result.json"))
        if p.relative_to(REPO / "results").parts[0] != "outputs"]  # not this project's CPU run
    assert records, "no GPU record of criteria/torch_backend/on_gpu.py"
    for path in records:
        record = json.loads(path.read_text(encoding="utf-8"))
        assert record["provenance"]["packages"]["keras"] == keras.__version__, path
        out, err = record["stdout"], record["stderr"]
        assert any(line.startswith("LSTM(") and "aten::_cudnn_rnn" in line
                   for line in out.splitlines()), out
        warned = [line for line in err.splitlines() if "keras/src/backend/torch/rnn.py" in line
                  and "not part of single contiguous chunk of memory" in line]
        assert warned, err[-2000:]
