"""Mixed precision on the numbers page (troubleshooting/numbers.md#pytorch-autocast-rnn): what
PyTorch's autocast hands to cuDNN's RNN, checked against the installed PyTorch by another route
than the snippet's, and on a GPU (`pytest -m gpu`) against real cuDNN calls."""
from __future__ import annotations

import re

import pytest

from conftest import REPO, printed
from pipeline.running import device

torch = pytest.importorskip("torch")
SNIPPET = "troubleshooting/autocast_rnn.py"
PAGES = [REPO / "docs" / "troubleshooting" / f"numbers{lang}.md" for lang in ("", ".es")]
ROW = re.compile(r"^(LSTM|GRU) +autocast (\w+) +input (\w+) +-> cuDNN gets (.+)$", re.M)


def cudnn_rnn_results(mode: str, autocast_dtype, input_dtype) -> dict[str, str]:
    """The dtypes aten::_cudnn_rnn returns when called on tensors that report "cuda", read from
    its results (which take the dtype of what PyTorch's autocast kernel passed on), not from a
    dispatch mode as the snippet does. A float16 flat weight buffer is passed, so the kernel has
    no weights to cast (that needs a cuDNN handle, so a GPU)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    H, I, gates = 4, 3, {"LSTM": 4, "GRU": 3}[mode]
    with FakeTensorMode():
        cuda = dict(device="cuda")
        w = [torch.zeros(gates * H, n, **cuda, dtype=torch.float16) for n in (I, H)]
        w += [torch.zeros(gates * H, **cuda, dtype=torch.float16) for _ in range(2)]
        flat = torch.zeros(sum(t.numel() for t in w), **cuda, dtype=torch.float16)
        x = torch.zeros(5, 2, I, **cuda, dtype=input_dtype)
        h = torch.zeros(1, 2, H, **cuda, dtype=input_dtype)
        c = torch.zeros(1, 2, H, **cuda, dtype=input_dtype) if mode == "LSTM" else None
        was = torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda")
        try:
            torch.set_autocast_enabled("cuda", autocast_dtype is not None)
            torch.set_autocast_dtype("cuda", autocast_dtype or torch.float16)
            out, hy, cy, _, _ = torch.ops.aten._cudnn_rnn(
                x, w, 4, flat, h, c, {"LSTM": 2, "GRU": 3}[mode], H, 0, 1, False, 0.0, False,
                False, [], None)
        finally:
            torch.set_autocast_enabled("cuda", was[0])
            torch.set_autocast_dtype("cuda", was[1])
            torch.clear_autocast_cache()
    got = {"input": out.dtype, "h0": hy.dtype}
    if c is not None:
        got["c0"] = cy.dtype
    return {k: str(v).removeprefix("torch.") for k, v in got.items()}


def test_the_installed_pytorch_registers_an_autocast_kernel_for_cudnns_rnn():
    table = torch._C._dispatch_dump("aten::_cudnn_rnn")
    (line,) = [ln for ln in table.splitlines() if ln.startswith("AutocastCUDA:")]
    assert "aten/src/ATen/cudnn/AutocastRNN.cpp" in line, line
    assert "AutocastRNN.cpp" in printed(SNIPPET)


def test_each_row_the_snippet_prints_is_what_cudnns_rnn_returns_under_autocast():
    rows = ROW.findall(printed(SNIPPET))
    assert len(rows) == 7, rows
    dtypes = {"off": None, "float16": torch.float16, "bfloat16": torch.bfloat16,
              "float32": torch.float32}
    for mode, autocast, input_dtype, shown in rows:
        want = cudnn_rnn_results(mode, dtypes[autocast], dtypes[input_dtype])
        assert shown == ", ".join(f"{k} {v}" for k, v in want.items()), (mode, autocast, shown)
    # what the page says of it: float16 under autocast of either dtype, untouched without
    assert {shown for _, a, _, shown in rows if a != "off"} == {
        "input float16, h0 float16, c0 float16", "input float16, h0 float16"}, rows


def test_the_cpu_rule_the_snippet_prints_is_pytorchs_autocast_list_for_the_cpu():
    """On the CPU, autocast has a kernel for oneDNN's LSTM layer and none for the GRU's ops, so
    the LSTM runs in bfloat16 (where the CPU's oneDNN takes it) and the GRU in float32."""
    def has(op, key):
        return any(ln.startswith(f"{key}:") for ln in torch._C._dispatch_dump(op).splitlines())
    assert has("aten::mkldnn_rnn_layer", "AutocastCPU")
    assert not any(has(op, "AutocastCPU") for op in ("aten::gru", "aten::gru_cell", "aten::lstm"))
    (line,) = [ln for ln in printed(SNIPPET).splitlines() if ln.startswith("CPU autocast")]
    assert "GRU float32" in line and re.search(r"LSTM (bfloat16|RuntimeError)", line), line


def test_the_installed_pytorch_has_the_bfloat16_rnn_rule_and_a_cudnn_new_enough_for_it():
    """pytorch/pytorch#164411's rule (CUDAHooks::supportsBFloat16RNNWithCuDNN: cuDNN 9.13 or newer
    at build, compute capability 8.0 or newer) is in the installed PyTorch's CUDA library, which
    was built with the cuDNN the page names."""
    import mmap
    from pathlib import Path
    lib = Path(torch.__file__).parent / "lib" / "libtorch_cuda.so"
    with lib.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        assert data.find(b"supportsBFloat16RNNWithCuDNN") != -1
    built = torch._C._cudnn.getCompileVersion()
    assert built >= (9, 13, 0)
    for page in PAGES:
        assert f"cuDNN {built[0]}.{built[1]} " in page.read_text(encoding="utf-8"), page.name


def test_the_page_shows_the_snippet_and_its_source_in_both_languages():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert f'--8<-- "{SNIPPET}:show"' in text and f"<!-- output: {SNIPPET} -->" in text
        assert "https://github.com/pytorch/pytorch/blob/v2.14.1/aten/src/ATen/cudnn/AutocastRNN.cpp" \
            in text, page.name


# --- on a GPU ------------------------------------------------------------------------------------

def gpu_test(fn):
    """Marked gpu (CPU CI deselects it); skipped, saying so, where there is no GPU."""
    return pytest.mark.gpu(pytest.mark.skipif(not device.has_gpu(), reason="needs a GPU")(fn))


def cuda_torch():
    assert torch.cuda.is_available() and torch.backends.cudnn.is_available(), \
        "PyTorch is installed but sees no CUDA GPU with cuDNN"
    return torch


def profiled_ops(fn) -> set[str]:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return {e.key for e in prof.key_averages()}


@gpu_test
@pytest.mark.parametrize("layer_class", ["LSTM", "GRU"])
def test_bfloat16_autocast_runs_the_cudnn_rnn_in_float16(layer_class):
    """Under torch.autocast("cuda", dtype=torch.bfloat16) a float32 nn.LSTM/nn.GRU returns
    float16, from cuDNN, and the very numbers float16 autocast gives."""
    cuda_torch()
    torch.manual_seed(0)
    layer = getattr(torch.nn, layer_class)(16, 32, num_layers=2).cuda()
    x = torch.randn(20, 8, 16, device="cuda")
    outs = {}
    for dtype in (torch.float16, torch.bfloat16):
        with torch.autocast("cuda", dtype=dtype):
            ops = profiled_ops(lambda: outs.__setitem__(dtype, layer(x)[0]))
        assert "aten::_cudnn_rnn" in ops, (dtype, sorted(ops))
    assert outs[torch.bfloat16].dtype == torch.float16
    assert torch.equal(outs[torch.bfloat16], outs[torch.float16])
    with torch.no_grad():  # and they are float16's numbers (bfloat16 keeps 3 bits fewer)
        reference = layer.half()(x.half())[0]
    torch.testing.assert_close(outs[torch.bfloat16].detach(), reference, rtol=0, atol=2e-3)


@gpu_test
def test_a_bfloat16_lstm_reaches_cudnn_where_pytorch_says_it_may():
    """Without autocast, a bfloat16 nn.LSTM runs aten::_cudnn_rnn on a GPU of compute capability
    8.0 or newer with a PyTorch built with cuDNN 9.13 or newer (pytorch/pytorch#164411), and
    PyTorch's own CUDA kernel elsewhere."""
    cuda_torch()
    layer = torch.nn.LSTM(16, 32).to("cuda", torch.bfloat16)
    x = torch.randn(20, 8, 16, device="cuda", dtype=torch.bfloat16)
    ops = profiled_ops(lambda: layer(x))
    major, _ = torch.cuda.get_device_capability()
    allowed = major >= 8 and torch._C._cudnn.getCompileVersion() >= (9, 13, 0)
    assert ("aten::_cudnn_rnn" in ops) == allowed, (allowed, sorted(ops))


def test_keras_3_on_pytorch_never_calls_torch_autocast():
    """The page says PyTorch's float16 rule for cuDNN's RNN under autocast does not touch a Keras
    layer: the installed Keras calls no torch.autocast (nor torch.amp, torch.cuda.amp)."""
    keras = pytest.importorskip("keras")
    from pathlib import Path
    root = Path(keras.__file__).parent
    calls = [p.relative_to(root) for p in root.rglob("*.py")
             if re.search(r"torch\.(autocast|amp\b|cuda\.amp)", p.read_text(encoding="utf-8"))]
    assert calls == []


@gpu_test
@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
@pytest.mark.parametrize("flavour", ["keras3", "tf_keras"])
def test_keras_policies_run_tensorflows_cudnn_op_on_a_gpu(flavour, policy):
    """On a GPU, an LSTM and a GRU under each mixed policy (Keras 3 on TensorFlow, and tf-keras)
    run TensorFlow's cuDNN op, as TensorFlow's profiler sees it, and not the generic loop's
    matrix products; the output is in the policy's dtype. The version matrix says so of a
    pretended GPU (numbers.md#mixed-precision-releases): this asks the GPU."""
    from test_cudnn_check_gpu import _tensorflow_gpu, tf_executed_ops
    tf = _tensorflow_gpu()
    if flavour == "keras3":
        keras = pytest.importorskip("keras")
        assert keras.backend.backend() == "tensorflow", "unset KERAS_BACKEND for this test"
        set_policy, layers = keras.mixed_precision.set_dtype_policy, keras.layers
    else:
        tf_keras = pytest.importorskip("tf_keras")
        set_policy, layers = tf_keras.mixed_precision.set_global_policy, tf_keras.layers
    set_policy(policy)
    try:
        for layer_class in (layers.LSTM, layers.GRU):
            layer, x, out = layer_class(32), tf.random.normal((8, 20, 16)), []
            ops = tf_executed_ops(tf, lambda: out.append(layer(x)))
            assert any(op.startswith("CudnnRNN") for op in ops), (layer_class.__name__,
                                                                   sorted(set(ops)))
            assert not any("MatMul" in op for op in ops), (layer_class.__name__, sorted(set(ops)))
            assert out[0].dtype.name == policy.removeprefix("mixed_")
    finally:
        set_policy("float32")
