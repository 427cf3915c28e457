"""Which kernel ran, shown by each framework itself. On a GPU (`pytest -m gpu`, `make gpu-run`):

- PyTorch's profiler names the cuDNN RNN op, `aten::_cudnn_rnn`, for nn.LSTM, nn.GRU and nn.RNN,
  also with bias=False, proj_size, dropout between layers, both directions and a PackedSequence,
  and for Keras 3 on the PyTorch backend; never for a loop over nn.LSTMCell, nor inside
  torch.backends.cudnn.flags(enabled=False), nor for use_cudnn=False.
- The program XLA compiles for a Keras 3 LSTM on the JAX backend calls cuDNN's RNN; a masked
  LSTM's, a GRU's and use_cudnn=False's do not.
- TensorFlow's graph of an eligible Keras LSTM or GRU holds `CudnnRNNV3`, an ineligible one's
  none; tf-keras's eligible layer also reports that its cuDNN implementation ran.

A framework that is not installed skips its tests, naming it. A framework that is installed but
cannot see the GPU fails: on a GPU machine that is a broken install, not a pass. Without a GPU,
the same probes run on the CPU (tests not marked gpu): they must see the RNN ops and no cuDNN,
so that the GPU tests' probes are known to look at the right thing.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from pipeline.running import device

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import framework_batch  # noqa: E402  (tests/: several programs, one framework import)

ON_GPU = device.has_gpu()


def gpu_test(fn):
    """Marked gpu (CPU CI deselects it); skipped, saying so, where there is no GPU."""
    return pytest.mark.gpu(pytest.mark.skipif(not ON_GPU, reason="needs a GPU")(fn))


cpu_only = pytest.mark.skipif(ON_GPU, reason="the CPU half of the probes; -m gpu runs the GPU half")
CUDNN_OP = "aten::_cudnn_rnn"


def need(module: str, name: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs {name}: not installed for this Python")


# --- PyTorch, in this process ---------------------------------------------------------------

def torch_ops(fn) -> set[str]:
    """The ops PyTorch's profiler saw while fn ran (and the GPU finished it)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    cuda = torch.cuda.is_available()
    with profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])) as p:
        fn()
        if cuda:
            torch.cuda.synchronize()
    return {e.key for e in p.key_averages()}


def torch_case(name: str, device_name: str):
    """(module, call) for each kind of recurrent layer PyTorch can hand to cuDNN."""
    import torch
    from torch import nn
    from torch.nn.utils.rnn import pack_padded_sequence
    torch.manual_seed(0)
    x = torch.randn(4, 10, 8, device=device_name)
    layers = {
        "LSTM": lambda: nn.LSTM(8, 16, batch_first=True),
        "LSTM bias=False": lambda: nn.LSTM(8, 16, bias=False, batch_first=True),
        "LSTM proj_size=4": lambda: nn.LSTM(8, 16, proj_size=4, batch_first=True),
        "LSTM 2 layers, dropout": lambda: nn.LSTM(8, 16, num_layers=2, dropout=0.5,
                                                  batch_first=True),
        "LSTM bidirectional": lambda: nn.LSTM(8, 16, bidirectional=True, batch_first=True),
        "LSTM PackedSequence": lambda: nn.LSTM(8, 16, batch_first=True),
        "GRU": lambda: nn.GRU(8, 16, batch_first=True),
        "RNN tanh": lambda: nn.RNN(8, 16, batch_first=True),
        "RNN relu": lambda: nn.RNN(8, 16, nonlinearity="relu", batch_first=True),
    }
    module = layers[name]().to(device_name).train()
    if name.endswith("PackedSequence"):
        packed = pack_padded_sequence(x, torch.tensor([10, 7, 5, 3]), batch_first=True)
        return module, lambda: module(packed)
    return module, lambda: module(x)


def forward_backward(call):
    """One forward and backward pass through the layer (a PackedSequence holds its tensor in
    .data; a tensor's .data would detach it from the graph)."""
    from torch.nn.utils.rnn import PackedSequence
    out = call()[0]
    (out.data if isinstance(out, PackedSequence) else out).sum().backward()


TORCH_CASES = ["LSTM", "LSTM bias=False", "LSTM proj_size=4", "LSTM 2 layers, dropout",
               "LSTM bidirectional", "LSTM PackedSequence", "GRU", "RNN tanh", "RNN relu"]
# The op each case shows on any device, so that an empty profile cannot pass for "no cuDNN".
TORCH_OP = {"GRU": "aten::gru", "RNN tanh": "aten::rnn_tanh", "RNN relu": "aten::rnn_relu"}


def _torch_on_gpu():
    need("torch", "PyTorch")
    import torch
    assert torch.cuda.is_available(), (
        f"nvidia-smi sees a GPU but PyTorch {torch.__version__} does not (a CPU-only build?)")
    return torch


@gpu_test
@pytest.mark.parametrize("case", TORCH_CASES)
def test_pytorch_runs_cudnn_for_every_recurrent_layer(case):
    torch = _torch_on_gpu()
    module, call = torch_case(case, "cuda")
    ops = torch_ops(lambda: forward_backward(call))  # forward and backward
    assert CUDNN_OP in ops, f"{case}: no {CUDNN_OP} among {sorted(o for o in ops if 'rnn' in o)}"
    assert torch.backends.cudnn.enabled


@gpu_test
def test_pytorch_without_cudnn_or_with_a_cell_loop_runs_no_cudnn():
    torch = _torch_on_gpu()
    from torch import nn
    module, call = torch_case("LSTM", "cuda")
    with torch.backends.cudnn.flags(enabled=False):
        off = torch_ops(call)
    assert "aten::lstm" in off and CUDNN_OP not in off, sorted(off)
    cell = nn.LSTMCell(8, 16).cuda()
    x = torch.randn(10, 4, 8, device="cuda")

    def loop():
        h = c = torch.zeros(4, 16, device="cuda")
        for t in range(10):
            h, c = cell(x[t], (h, c))

    ops = torch_ops(loop)
    assert "aten::lstm_cell" in ops and CUDNN_OP not in ops, sorted(ops)
    assert CUDNN_OP in torch_ops(call)  # and the same layer, cuDNN on again, does use it


@cpu_only
@pytest.mark.parametrize("case", TORCH_CASES)
def test_pytorch_probe_on_the_cpu_sees_the_rnn_op_and_no_cudnn(case):
    need("torch", "PyTorch")
    module, call = torch_case(case, "cpu")
    ops = torch_ops(lambda: forward_backward(call))
    assert TORCH_OP.get(case, "aten::lstm") in ops and CUDNN_OP not in ops, sorted(ops)


# --- Keras 3 and tf-keras: each a program with its backend set (tests/framework_batch.py) ---

KERAS_TORCH = """
import json, torch, keras
from torch.profiler import ProfilerActivity, profile
def ops(layer):
    model = keras.Sequential([keras.Input((10, 8)), layer])
    x = keras.ops.ones((4, 10, 8))
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=acts) as prof:
        model(x)
    return sorted({e.key for e in prof.key_averages()})
out = {"gpu": torch.cuda.is_available(), "device": str(keras.ops.ones((1,)).device)}
for name, kwargs in [("LSTM", {}), ("GRU", {}), ("LSTM use_cudnn=False", {"use_cudnn": False}),
                     ("GRU use_cudnn=False", {"use_cudnn": False})]:
    out[name] = ops(getattr(keras.layers, name.split()[0])(16, **kwargs))
print(json.dumps(out))
"""
KERAS_JAX = """
import json, jax, keras
def program(*layers):
    model = keras.Sequential([keras.Input((10, 8)), *layers])
    w = [v.value for v in model.trainable_variables]
    o = [v.value for v in model.non_trainable_variables]
    call = jax.jit(lambda w, o, x: model.stateless_call(w, o, x)[0])
    hlo = call.lower(w, o, keras.ops.ones((4, 10, 8))).compile().as_text()
    return {"cudnn": "cudnn_rnn" in hlo, "loop": "while" in hlo}
print(json.dumps({
    "gpu": jax.default_backend() == "gpu",
    "LSTM": program(keras.layers.LSTM(16)),
    "LSTM masked": program(keras.layers.Masking(0.0), keras.layers.LSTM(16)),
    "LSTM use_cudnn=False": program(keras.layers.LSTM(16, use_cudnn=False)),
    "GRU": program(keras.layers.GRU(16)),
}))
"""
GRAPH_OPS = """
def graph_ops(model):
    fn = tf.function(lambda v: model(v, training=False))
    g = fn.get_concrete_function(tf.zeros((4, 10, 8))).graph.as_graph_def()
    return sorted({n.op for n in list(g.node) + [n for f in g.library.function for n in f.node_def]
                   if n.op.startswith("Cudnn") or n.op in ("While", "StatelessWhile")})
"""
KERAS_TF = """
import json, tensorflow as tf, keras
""" + GRAPH_OPS + """
def ops(**kwargs):
    layer = getattr(keras.layers, kwargs.pop("layer"))(16, **kwargs)
    return graph_ops(keras.Sequential([keras.Input((10, 8)), layer]))
print(json.dumps({
    "gpu": bool(tf.config.list_physical_devices("GPU")),
    "LSTM": ops(layer="LSTM"), "GRU": ops(layer="GRU"),
    "LSTM recurrent_dropout=0.2": ops(layer="LSTM", recurrent_dropout=0.2),
    "LSTM use_cudnn=False": ops(layer="LSTM", use_cudnn=False),
}))
"""
TF_KERAS = """
import json, tensorflow as tf, tf_keras
""" + GRAPH_OPS + """
NEUTRAL = {"activation": lambda v: tf.tanh(v)}  # the same tanh, not the function the rule names
out = {"gpu": bool(tf.config.list_physical_devices("GPU"))}
for layer in ("LSTM", "GRU"):
    cls = getattr(tf_keras.layers, layer)
    out[layer] = graph_ops(tf_keras.Sequential([tf_keras.Input((10, 8)), cls(16)]))
    out[layer + " neutral"] = graph_ops(tf_keras.Sequential([tf_keras.Input((10, 8)),
                                                             cls(16, **NEUTRAL)]))
    _, runtime = cls(16, return_runtime=True)(tf.zeros((4, 10, 8)))
    out[layer + " runtime"] = int(runtime)
print(json.dumps(out))
"""
PROBES = {  # name: (script, modules it needs, framework, environment)
    "keras-torch": (KERAS_TORCH, ("torch", "keras"), "Keras 3 and PyTorch", {"KERAS_BACKEND": "torch"}),
    "keras-jax": (KERAS_JAX, ("jax", "keras"), "Keras 3 and JAX", {"KERAS_BACKEND": "jax"}),
    "keras-tensorflow": (KERAS_TF, ("tensorflow", "keras"), "Keras 3 and TensorFlow",
                         {"KERAS_BACKEND": "tensorflow"}),
    "tf-keras": (TF_KERAS, ("tensorflow", "tf_keras"), "TensorFlow and tf-keras",
                 {"TF_USE_LEGACY_KERAS": "1"}),
}


# Keras 3 on TensorFlow and tf-keras share one process: TensorFlow imported once for both.
TENSORFLOW_PROBES = ("keras-tensorflow", "tf-keras")


@functools.lru_cache(maxsize=None)
def _run_probes(names: tuple) -> dict:
    """Each probe a program of its own, all of `names` in one process (tests/framework_batch.py),
    each with its own environment."""
    runs = framework_batch.run([{"code": PROBES[n][0], "env": PROBES[n][3]} for n in names],
                               timeout=600, env={"TF_CPP_MIN_LOG_LEVEL": "2",
                                                 "TF_FORCE_GPU_ALLOW_GROWTH": "true",
                                                 "XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    return dict(zip(names, runs))


def probe(name: str) -> dict:
    script, modules, framework, env = PROBES[name]
    for module in modules:
        need(module, framework)
    together = name in TENSORFLOW_PROBES and all(
        importlib.util.find_spec(m) for n in TENSORFLOW_PROBES for m in PROBES[n][1])
    proc = _run_probes(TENSORFLOW_PROBES if together else (name,))[name]
    assert proc.returncode == 0, f"{name} probe failed:\n{proc.stderr[-3000:]}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if ON_GPU:
        assert out["gpu"], f"{framework}: nvidia-smi sees a GPU, this framework does not"
    return out


@gpu_test
def test_keras_on_the_pytorch_backend_runs_cudnn_unless_told_not_to():
    out = probe("keras-torch")
    assert "cuda" in out["device"]
    for layer in ("LSTM", "GRU"):
        assert CUDNN_OP in out[layer], (layer, out[layer])
        assert CUDNN_OP not in out[f"{layer} use_cudnn=False"], out[f"{layer} use_cudnn=False"]


@gpu_test
def test_keras_on_the_jax_backend_calls_cudnn_for_an_unmasked_lstm_only():
    out = probe("keras-jax")
    assert out["LSTM"]["cudnn"], "Keras's LSTM on JAX compiled without cuDNN's RNN"
    for case in ("LSTM masked", "LSTM use_cudnn=False", "GRU"):
        assert not out[case]["cudnn"] and out[case]["loop"], (case, out[case])


@gpu_test
def test_tensorflow_graph_holds_cudnn_rnn_v3_for_an_eligible_keras_layer_only():
    out = probe("keras-tensorflow")
    for case in ("LSTM", "GRU"):
        assert "CudnnRNNV3" in out[case], (case, out[case])
    for case in ("LSTM recurrent_dropout=0.2", "LSTM use_cudnn=False"):
        assert not any(op.startswith("Cudnn") for op in out[case]), (case, out[case])


@gpu_test
def test_tf_keras_eligible_layer_runs_cudnn_and_a_neutral_argument_stops_it():
    out = probe("tf-keras")
    for layer in ("LSTM", "GRU"):
        assert "CudnnRNNV3" in out[layer] and out[f"{layer} runtime"] == 2, out
        assert not any(op.startswith("Cudnn") for op in out[f"{layer} neutral"]), out


@cpu_only
def test_keras_probes_on_the_cpu_see_no_cudnn():
    torch_out = probe("keras-torch")
    assert not torch_out["gpu"] and "cpu" in torch_out["device"]
    for case in ("LSTM", "GRU", "LSTM use_cudnn=False", "GRU use_cudnn=False"):
        assert CUDNN_OP not in torch_out[case] and "aten::matmul" in torch_out[case], case
    jax_out = probe("keras-jax")
    for case in ("LSTM", "LSTM masked", "LSTM use_cudnn=False", "GRU"):
        assert jax_out[case] == {"cudnn": False, "loop": True}, (case, jax_out[case])
    tf_out = probe("keras-tensorflow")
    for case in ("LSTM", "GRU", "LSTM recurrent_dropout=0.2", "LSTM use_cudnn=False"):
        assert tf_out[case] in (["While"], ["StatelessWhile"]), (case, tf_out[case])


@cpu_only
def test_tf_keras_graph_holds_both_implementations_and_the_cpu_one_runs():
    """tf-keras traces the cuDNN function into an eligible layer's graph on any machine, and
    Grappler picks the implementation when it runs: CudnnRNNV3 in the graph is not proof that
    cuDNN ran. What ran is the runtime flag: 1, the CPU's, here."""
    out = probe("tf-keras")
    for layer in ("LSTM", "GRU"):
        assert "CudnnRNNV3" in out[layer] and out[f"{layer} runtime"] == 1, out
        assert not any(op.startswith("Cudnn") for op in out[f"{layer} neutral"]), out
