"""The troubleshooting entries about exports that give other numbers or fail after a move, NaN
from extreme inputs, and AMD GPUs: what each says it showed is what its program printed in
this build, and what it read from the installed libraries is there."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from conftest import REPO, TROUBLESHOOTING, printed

PAGES = TROUBLESHOOTING  # every troubleshooting page of a language, read as one (conftest.py)


def _folder(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    return Path(spec.origin).parent


def section(lang: str, anchor: str) -> str:
    return PAGES[lang].section(anchor)  # on its own page, to the next heading of its level


def test_an_exported_lstm_keeps_its_zeros_on_the_export_device():
    """#export-device: the zeros of the missing state are made on the export's device; moving
    the module fails with PyTorch's device message; a state made from the input moves."""
    out = printed("troubleshooting/export_device.py")
    assert "exported on the CPU: the initial state's zeros are made on ['cpu', 'cpu']" in out
    assert ("moved to meta: RuntimeError: Input and hidden tensors are not at the same device, "
            "found input tensor at meta and hidden tensor at cpu") in out
    assert "state made with x.new_zeros: zeros in the graph []" in out
    assert "moved to meta: (4, 32)" in out
    assert "exported on meta: the zeros are made on ['meta', 'meta']" in out


def test_both_gru_exporters_write_linear_before_reset_and_zero_gives_other_numbers():
    """#gru-onnx-export: with the installed PyTorch and onnxscript, both exporters write
    linear_before_reset=1 and match PyTorch; the attribute at 0 is off by about 0.1."""
    out = printed("troubleshooting/gru_onnx_export.py")
    diffs = {}
    for dynamo in ("True", "False"):
        m = re.search(rf"dynamo={dynamo}: GRU node with linear_before_reset=1, largest difference "
                      rf"from PyTorch ([\d.e+-]+)", out)
        assert m, (dynamo, out)
        diffs[dynamo] = float(m.group(1))
    assert max(diffs.values()) < 1e-5, diffs
    wrong = float(re.search(r"linear_before_reset=0: largest difference ([\d.e+-]+)", out).group(1))
    assert 0.05 < wrong < 0.5, wrong  # "about 0.1", as in the reports


def test_kerass_gru_resets_after_the_matrix_product_by_default():
    """#gru-onnx-export quotes Keras's docstring: reset_after=True, "after", "cuDNN compatible"."""
    source = (_folder("keras") / "src" / "layers" / "rnn" / "gru.py").read_text(encoding="utf-8")
    doc = " ".join(source.split())
    assert ('reset_after: GRU convention (whether to apply reset gate after or before matrix '
            'multiplication). False = "before", True = "after" (default and cuDNN compatible).') in doc
    assert "reset_after=True," in source


def test_the_nan_entry_says_what_the_cpu_did():
    """#pytorch-nan: NaN spreads along its sequence only; inf and 1e30 stay finite on the CPU;
    float16's largest value; the check finds the row."""
    out = printed("troubleshooting/nan_inputs.py")
    assert "input    nan at sequence 1, step 2: finite steps per sequence " \
           "['yyyyy', 'yynnn', 'yyyyy']" in out
    for bad in ("   inf", " 1e+30"):
        assert f"input {bad} at sequence 1, step 2: finite steps per sequence " \
               "['yyyyy', 'yyyyy', 'yyyyy']" in out, bad
    assert "float16 holds up to 65504.0 ; 70000.0 becomes inf" in out
    assert "rows with a NaN or an inf: [2]" in out


def test_the_amd_entry_reads_the_installed_pytorch_as_a_cuda_build_without_miopen():
    """#amd-rocm: the PyTorch installed here is the CUDA build, and its CUDA library says MIOpen
    is not compiled in; the entry says no AMD GPU ran anything, in both languages, and links
    the source of use_miopen at a commit."""
    import torch
    assert torch.version.cuda and torch.version.hip is None
    lib = (_folder("torch") / "lib" / "libtorch_cuda.so").read_bytes()
    assert b"miopen_rnn_backward: ATen not compiled with MIOpen support." in lib
    link = ("https://github.com/pytorch/pytorch/blob/012234a684cae66fc67e5c8819c6fab222fdf6c3/"
            "aten/src/ATen/native/RNN.cpp")
    for lang, words in (("en", "No AMD GPU has run anything here."),
                        ("es", "Ninguna GPU de AMD ha ejecutado nada aquí.")):
        text = section(lang, "amd-rocm")
        assert words in text and link in text and "torch.backends.cudnn.enabled = False" in text


def test_the_rocm_keras_entry_is_what_tf_keras_and_keras_3_do():
    """#rocm-keras: tf-keras's own check, asked with TensorFlow saying ROCm, sends a right-padded
    batch to the generic loop (the program's output); Keras 3's TensorFlow backend decides on a
    mask without asking which build it runs on, and both reorder the LSTM's gates for MIOpen."""
    out = printed("troubleshooting/rocm_keras_mask.py")
    assert re.search(r"right-padded\s+CUDA build: True\s+ROCm build: False", out), out
    assert re.search(r"no padding\s+CUDA build: True\s+ROCm build: True", out), out
    import inspect
    keras3 = importlib.import_module("keras.src.backend.tensorflow.rnn")
    for decides in (keras3.cudnn_ok, keras3.lstm, keras3._assert_valid_mask,
                    keras3._is_sequence_right_padded):
        assert "rocm" not in inspect.getsource(decides).lower(), decides.__name__
    reorder = "(0, 1, 3, 2, 4, 5, 7, 6)"
    assert "is_rocm_build" in inspect.getsource(keras3._cudnn_lstm)
    assert reorder in inspect.getsource(keras3._cudnn_lstm)
    tf_keras_lstm = (_folder("tf_keras") / "src/layers/rnn/lstm.py").read_text()
    assert "is_rocm_build" in tf_keras_lstm and reorder in tf_keras_lstm
    for lang in ("en", "es"):
        text = section(lang, "rocm-keras")
        assert "<!-- output: troubleshooting/rocm_keras_mask.py -->" in text
        assert "tf-keras 2.21.0" in text
