"""The criteria pages quote the libraries verbatim, and Keras 2's kernel choice is visible in
the traced graph on a CPU."""
from __future__ import annotations

import importlib
import os
import re

import numpy as np
import pytest

from conftest import REPO, TROUBLESHOOTING

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from tf_keras.src.layers.rnn import gru_lstm_utils  # noqa: E402

PAGES = {name: [(REPO / "docs" / f"{name}.md").read_text(encoding="utf-8"),
                (REPO / "docs" / f"{name}.es.md").read_text(encoding="utf-8")]
         for name in ("warning", "criteria", "fixing", "index")}
PAGES["troubleshooting"] = [TROUBLESHOOTING["en"].read_text(), TROUBLESHOOTING["es"].read_text()]
tf_rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")


def quoted(page: str) -> list[str]:
    """What a page quotes as a library's text: its > blockquotes, and the messages it shows with
    <!-- message: ID --> (data/messages.yml)."""
    import yaml
    registry = yaml.safe_load((REPO / "data" / "messages.yml").read_text(encoding="utf-8"))
    return ([line[2:].strip() for line in page.splitlines() if line.startswith("> ")]
            + [registry[m]["text"] for m in re.findall(r"<!-- message: ([\w-]+) -->", page)])


def test_warning_text_is_tf_keras_verbatim():
    text = gru_lstm_utils.CUDNN_NOT_AVAILABLE_MSG % "lstm"
    for page in PAGES["warning"]:
        assert text in quoted(page)


def test_use_cudnn_error_is_keras_verbatim():
    with pytest.raises(ValueError) as err:  # no GPU, or an ineligible layer: both raise
        keras.layers.LSTM(2, use_cudnn=True, unroll=True)(np.zeros((1, 2, 2), "float32"))
    line = [s for s in str(err.value).splitlines() if "use_cudnn=True was" in s][0]
    text = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
    for page in PAGES["warning"]:
        assert text in quoted(page)


def test_mask_assertion_is_keras_verbatim():
    with pytest.raises(tf.errors.InvalidArgumentError) as err:
        tf_rnn._assert_valid_mask(tf.constant([[False, True]]))
    message = err.value.message
    for page in PAGES["criteria"]:
        texts = [q for q in quoted(page) if q.startswith("You are passing a RNN mask")]
        assert len(texts) == 1
        assert texts[0].replace("`", "") in message.replace("`", ""), message


def test_pages_share_snippets_and_outputs():
    for name, (en, es) in PAGES.items():
        pick = lambda s: re.findall(r'--8<-- "[^"]+"|<!-- output: [^>]+-->', s)  # noqa: E731
        assert pick(en) == pick(es) and pick(en), name


def _rnn_sources_saying(package) -> tuple[int, list[str]]:
    """How many of the package's RNN source files were read, and those holding tf-keras's
    warning ("... will not use cuDNN kernels since it doesn't meet the criteria ...")."""
    root = os.path.join(os.path.dirname(package.__file__), "src")
    scanned, saying = 0, []
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py") and ("rnn" in dirpath or f == "rnn.py"):
                scanned += 1
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    if "doesn't meet the criteria" in fh.read():
                        saying.append(f)
    return scanned, saying


def test_keras3_has_no_warning_text():
    """Keras 3 never prints tf-keras's warning: none of its RNN sources holds the text. The
    same search finds it in tf-keras, so it looks at the right files for the right words."""
    scanned, saying = _rnn_sources_saying(keras)
    assert scanned > 0, "no Keras 3 RNN source found: the search looks in the wrong place"
    assert saying == []
    assert _rnn_sources_saying(tf_keras)[1] == ["gru_lstm_utils.py"]


def cudnn_ops(layer):
    graph = tf.function(layer).get_concrete_function(tf.zeros((2, 4, 3))).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return {n.op for n in nodes if n.op.startswith("Cudnn")}


@pytest.mark.parametrize("make, eligible", [
    (lambda L: L.LSTM(3), True),
    (lambda L: L.GRU(3), True),
    (lambda L: L.LSTM(3, recurrent_dropout=0.2), False),
    (lambda L: L.LSTM(3, activation="relu"), False),
    (lambda L: L.GRU(3, reset_after=False), False),
    (lambda L: L.GRU(3, use_bias=False), False),
])
def test_keras2_graph_holds_cudnn_candidate_only_when_eligible(make, eligible):
    layer = make(tf_keras.layers)
    assert layer._could_use_gpu_kernel is eligible
    ops = cudnn_ops(layer)
    assert ("CudnnRNNV3" in ops) is eligible, ops


def test_keras2_logs_no_warning_without_gpu():
    import logging
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    tf.get_logger().addHandler(handler)
    try:
        tf_keras.layers.LSTM(3, recurrent_dropout=0.3)
    finally:
        tf.get_logger().removeHandler(handler)
    warned = any("will not use cuDNN" in r.getMessage() for r in records)
    assert warned == bool(tf.config.list_logical_devices("GPU"))


def test_jit_compile_warning_is_keras_verbatim():
    """The troubleshooting pages quote the warning Keras gives for compile(jit_compile=True)
    on a model whose RNN layer does not support XLA."""
    from keras.src.trainers import trainer
    source = open(trainer.__file__, encoding="utf-8").read()
    text = "Model doesn't support `jit_compile=True`. Proceeding with `jit_compile=False`."
    joined = re.sub(r'"\s*\n\s*"', "", source)  # Keras splits the string over two lines
    assert text in joined
    for lang in ("en", "es"):
        page = TROUBLESHOOTING[lang].read_text()
        assert text in " ".join(page.split()), lang


def test_pages_name_the_installed_keras():
    """The criteria pages say which Keras they were checked against."""
    for page in PAGES["criteria"]:
        assert f"Keras {keras.__version__}" in page or f"usa Keras {keras.__version__}" in page


def test_criteria_tables_cover_every_framework():
    """The side-by-side table has one column per framework, in both languages, and every
    snippet under snippets/criteria/ is shown on the page."""
    columns = ["Keras 2 (tf-keras)", "Keras 3 · TensorFlow", "Keras 3 · JAX",
               "Keras 3 · PyTorch", "PyTorch `nn.LSTM`/`nn.GRU`"]
    snippets = sorted(p.relative_to(REPO / "snippets").as_posix()
                      for p in (REPO / "snippets" / "criteria").rglob("*.py")
                      if not p.name.startswith("_"))
    for page, warning in zip(PAGES["criteria"], PAGES["warning"]):
        header = next(line for line in page.splitlines() if line.startswith("| rule")
                      or line.startswith("| regla"))
        assert [c.strip() for c in header.strip("|").split("|")][1:] == columns
        outputs = set(re.findall(r"<!-- output: (\S+) -->", page + warning))
        assert set(snippets) <= outputs, set(snippets) - outputs
