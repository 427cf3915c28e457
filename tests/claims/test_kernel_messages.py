"""pipeline/claims/kernel_messages.py: the messages of the installed libraries' compiled RNN
kernels, read from their shared objects, and data/kernel_messages.yml's row for each.

The data is judged against a fresh reading of the installed binaries: a candidate the data
neither answers nor leaves out fails, and so does a row whose message no binary holds any more.
The reader is judged by the libraries themselves: the messages PyTorch's compiled RNN code
prints on the CPU are among what it reads, and each row said to need no GPU is printed by the
library on the CPU here, its text holding the row's message."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest
import yaml

from conftest import REPO
from search_node import ask

sys.path.insert(0, str(REPO))
from pipeline.claims import kernel_messages as km  # noqa: E402

DATA = REPO / "data" / "kernel_messages.yml"


@pytest.fixture(scope="module")
def found() -> dict[str, dict[str, km.Candidate]]:
    return {library: km.extract(library) for library in km.LIBRARIES}


@pytest.fixture(scope="module")
def data() -> dict:
    return km.load_data(DATA)


@pytest.fixture(scope="module")
def problems(found, data) -> list[str]:
    return km.problems(found, data)


# --- the data, against the installed binaries -------------------------------------------------

def test_every_candidate_of_the_installed_binaries_has_a_row_or_a_reason(problems):
    lacking = [p for p in problems if " lacks " in p]
    assert not lacking, "\n".join(lacking)


def test_every_row_is_in_an_installed_binary_and_every_left_out_item_covers_a_string(problems):
    stale = [p for p in problems if " lacks " not in p]
    assert not stale, "\n".join(stale)


def test_a_row_no_binary_holds_is_missing(data):
    real = next(r for r in data["rows"] if r["library"] == "torch")
    fake = dict(real, message="No such RNN message at all")
    assert km.missing([real, fake]) == [fake]


def test_a_candidate_the_data_lacks_is_not_covered(found, data):
    row = next(r for r in data["rows"] if r["library"] == "torch" and r["gpu"])
    candidate = found["torch"][row["message"]]
    assert km.covered_by(candidate, data) == "row"
    fewer = {"rows": [r for r in data["rows"] if r is not row], "left_out": data["left_out"]}
    assert km.covered_by(candidate, fewer) is None


def test_each_library_s_kernels_are_read(found):
    """The cuDNN RNN file's window in libtorch_cuda.so and the TensorFlow kernel's words."""
    torch_files = {f for c in found["torch"].values() for f in c.files}
    assert {"libtorch_cuda.so", "libtorch_cpu.so"} <= torch_files
    assert any("DoRnnForward" in c.text for c in found["tensorflow"].values())
    assert len(found["torch"]) >= 100 and len(found["tensorflow"]) >= 30


def test_the_data_refuses_a_row_without_both_languages(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump({"rows": [{
        "library": "torch", "message": "x y", "condition": {"en": "a", "es": "b"},
        "gpu": True, "en": "Do this."}]}), encoding="utf-8")
    with pytest.raises(km.KernelMessagesError, match="a row holds"):
        km.load_data(bad)
    bad.write_text(yaml.safe_dump({"left_out": [{"library": "torch", "match": "x",
                                                 "reason": {"en": "a", "es": "b"}}]}),
                   encoding="utf-8")
    with pytest.raises(km.KernelMessagesError, match="left-out item"):
        km.load_data(bad)


# --- what the libraries print on the CPU ------------------------------------------------------

# Each case makes a library's compiled RNN code print one message on the CPU; the process prints
# the text of each.
TRIGGERS = textwrap.dedent('''
    import json, os, warnings
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import torch
    from torch import nn

    def tf32():
        torch.backends.cudnn.rnn.fp32_precision = "tf32"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
        return torch.backends.cudnn.allow_tf32

    def cudnn_rnn_on_cpu():
        import tensorflow as tf
        z = tf.zeros
        tf.raw_ops.CudnnRNN(input=z((5, 3, 4)), input_h=z((1, 3, 8)), input_c=z((1, 3, 8)),
                            params=z((500,)))

    weights = lambda: list(nn.LSTM(4, 8)._flat_weights)
    CASES = {
        "cell_input": lambda: nn.LSTMCell(4, 8)(torch.zeros(2, 5)),
        "cell_hidden": lambda: nn.LSTMCell(4, 8)(torch.zeros(2, 4),
                                                 (torch.zeros(2, 7), torch.zeros(2, 8))),
        "cell_batch": lambda: nn.GRUCell(4, 8)(torch.zeros(2, 4), torch.zeros(3, 8)),
        "no_steps": lambda: nn.LSTM(4, 8)(torch.zeros(0, 2, 4)),
        "lstm_one_state": lambda: torch.lstm(torch.zeros(3, 2, 4), (torch.zeros(1, 2, 8),),
                                             weights(), True, 1, 0.0, False, False, False),
        "lstm_cell_one_state": lambda: torch.lstm_cell(torch.zeros(2, 4), (torch.zeros(2, 8),),
                                                       *nn.LSTMCell(4, 8).parameters()),
        "tf32": tf32,
        "onednn_projection": lambda: nn.LSTM(4, 8, proj_size=3).to(torch.bfloat16)(
            torch.zeros(3, 2, 4, dtype=torch.bfloat16)),
        "cudnn_rnn_on_cpu": cudnn_rnn_on_cpu,
    }
    out = {}
    for name, case in CASES.items():
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            try:
                case()
            except Exception as e:
                out[name] = str(e)
                continue
        out[name] = str(warned[0].message) if warned else None
    print(json.dumps(out))
''')

# case -> the start of the row's message, typed here from the library's output, not the data
EXPECTED = {
    "cell_input": "input has inconsistent input_size: got",
    "cell_hidden": "has inconsistent hidden_size: got",
    "cell_batch": "Input batch size",
    "no_steps": "Expected sequence length to be larger than 0 in RNN",
    "lstm_one_state": "lstm expects two hidden states",
    "lstm_cell_one_state": "lstm_cell expects two hidden states",
    "tf32": "but the current flag(s) indicate that cuDNN conv and cuDNN RNN",
    "onednn_projection": "LSTM with projections is not supported with oneDNN",
    "cudnn_rnn_on_cpu": "Could not find device for node:",
}
# the cases whose message comes from PyTorch's RNN sources (the others: a generic message, or a
# row the reader names by its words)
FROM_RNN_FILES = {"cell_input", "cell_hidden", "cell_batch", "no_steps", "lstm_one_state",
                  "lstm_cell_one_state"}


@pytest.fixture(scope="module")
def printed() -> dict:
    proc = subprocess.run([sys.executable, "-c", TRIGGERS], capture_output=True, text=True,
                          timeout=600, cwd="/")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _row(data: dict, start: str) -> dict:
    (row,) = [r for r in data["rows"] if r["message"].strip().startswith(start.strip())]
    return row


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_what_the_library_prints_on_the_cpu_holds_its_row_s_message(case, printed, data, found):
    got = printed[case]
    assert got and EXPECTED[case] in got, (case, got)
    row = _row(data, EXPECTED[case])
    assert row["gpu"] is False, row["message"]
    assert " ".join(row["message"].split()) in " ".join(got.split()), (row["message"], got)
    if case in FROM_RNN_FILES:
        assert row["message"] in found["torch"], (case, row["message"])


def test_each_row_that_needs_no_gpu_is_triggered_here(data):
    cpu_rows = {r["message"].strip() for r in data["rows"] if not r["gpu"]}
    triggered = {_row(data, start)["message"].strip() for start in EXPECTED.values()}
    assert cpu_rows <= triggered, cpu_rows - triggered


# --- the page ---------------------------------------------------------------------------------

def test_each_row_has_a_heading_of_its_own_in_both_languages(data):
    for lang, suffix in (("en", ".md"), ("es", ".es.md")):
        page = (REPO / "docs" / "troubleshooting" / f"messages{suffix}").read_text(encoding="utf-8")
        drawn, problems = km.render(page, lang, REPO)
        assert not problems
        for row in data["rows"]:
            assert f"{{ #{km.row_id(row['library'], row['message'])} }}" in drawn, (lang, row)
        for item in data["left_out"]:
            assert " ".join(item["reason"][lang].split()) in drawn, (lang, item)
        assert "<!-- kernel-messages" not in drawn


def _pasted(message: str) -> str:
    """The message as a reader pastes it: what the library appends filled in."""
    text = km.shown(message).replace("{}", "7")
    return ("Input and parameter" + text) if text.startswith(" ") else text


def test_pasting_each_message_finds_its_row_in_both_languages(site_root, data):
    """One batch per language through the site's own search worker in Node (tests/search_node.py): each message,
    pasted, lists the messages page among the first three pages, that page's first result is
    a row, and the message's own row is among its first three."""
    rows = data["rows"]
    queries = [_pasted(r["message"]) for r in rows]
    # a kernel's check that repeats the words of a Python one (PyTorch's `Expected hidden size `)
    # may land on the Python message's row: the same words, answered there
    from pipeline.claims import library_messages as lm
    python_texts = {mid: m.text for mid, m in lm.extract_all().items()}
    failed = []
    for lang, prefix in (("en", ""), ("es", "es/")):
        answers = ask(site_root, lang, queries)
        page = f"{prefix}troubleshooting/messages/"
        for row, query, pages in zip(rows, queries, answers):
            rid = km.row_id(row["library"], row["message"])
            ours = [p for p in pages[:3] if p and p[0]["location"].split("#")[0] == page]
            if not ours:
                failed.append((lang, query, "page not in the first three",
                               [p[0]["location"] for p in pages[:3] if p]))
                continue
            anchors = [r["location"].partition("#")[2] for r in ours[0]]
            if not anchors[0]:
                failed.append((lang, query, "the page's top first", anchors[:3]))
            elif rid not in anchors[:3] and not any(
                    python_texts.get(a, "").startswith(row["message"]) for a in anchors[:3]):
                failed.append((lang, query, "not among the page's first three", anchors[:3]))
    assert not failed, f"{len(failed)} of {2 * len(rows)}: {failed}"


def test_shown_marks_where_the_library_appends():
    assert km.shown("Invalid input_h shape: ") == "Invalid input_h shape: {}"
    assert km.shown("No Rnn algorithm found") == "No Rnn algorithm found"
    assert re.fullmatch(r"kernel-torch-[a-z0-9-]+-[0-9a-f]{6}",
                        km.row_id("torch", "rnn: hx is not contiguous"))
