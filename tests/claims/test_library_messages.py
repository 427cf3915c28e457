"""pipeline/claims/library_messages.py: every message the recurrent-layer code of the installed
libraries can raise or warn, and data/library_messages.yml's row for each.

What judges the extractor is the libraries themselves: a few messages are triggered on the CPU in
a separate process, and the text each library printed must be the row's message (its pattern
matches it, and no other row matches it better), raised from the file and the lines the extractor
names. The data is judged against a fresh reading of the installed source: a message with no row
and no reason fails, and so does a row no library holds any more."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO
from search_node import ask

sys.path.insert(0, str(REPO))
from pipeline.claims import library_messages as lm  # noqa: E402

DATA = REPO / "data" / "library_messages.yml"


@pytest.fixture(scope="module")
def found() -> dict[str, lm.Message]:
    return lm.extract_all()


@pytest.fixture(scope="module")
def data() -> dict:
    return lm.load_data(DATA)


# --- the extractor, against the libraries ----------------------------------------------------

# Each case makes the library raise (or warn) one message on the CPU. The process prints, for
# each, the text the library wrote and the library frames it came through (file, line).
TRIGGERS = textwrap.dedent('''
    import json, os, sys, traceback, warnings
    os.environ["KERAS_BACKEND"] = "jax"
    import torch
    from torch import nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    import jax.numpy as jnp
    from jax.experimental import rnn as jax_rnn
    import keras

    def lstm_ref_with_dropout():
        z = jnp.zeros((1, 2, 3))
        jax_rnn.lstm_ref(z, z, z, {}, {}, {}, {}, jnp.zeros((1,), jnp.int32), 3, 3, 1, 0.5, False)

    CASES = {
        "proj_size": lambda: nn.LSTM(10, 20, proj_size=30),
        "hidden0": lambda: nn.LSTM(10, 20)(torch.zeros(5, 3, 10),
                                           (torch.zeros(1, 2, 20), torch.zeros(1, 3, 20))),
        "input_size": lambda: nn.LSTM(10, 20)(torch.zeros(5, 3, 11)),
        "total_length": lambda: pad_packed_sequence(
            pack_padded_sequence(torch.zeros(5, 2, 3), [5, 3]), total_length=2),
        "grucell": lambda: nn.GRUCell(4, 8)(torch.zeros(2, 3, 4)),
        "dropout_warning": lambda: nn.LSTM(10, 20, dropout=0.5),
        "keras_units": lambda: keras.layers.LSTM(units=0),
        "keras_merge_mode": lambda: keras.layers.Bidirectional(keras.layers.LSTM(4),
                                                               merge_mode="max"),
        "keras_use_cudnn": lambda: keras.layers.GRU(4, use_cudnn="yes"),
        "jax_dropout": lstm_ref_with_dropout,
    }
    # a warning names its caller's line (stacklevel): note where warnings.warn was called
    warned, warn = [], warnings.warn
    def noting(message, *args, **kwargs):
        frames = [(f.filename, f.lineno) for f in traceback.extract_stack()[:-1]]
        warned.append({"text": str(message), "frames": frames})
        return warn(message, *args, **kwargs)
    warnings.warn = noting
    out = {}
    for name, case in CASES.items():
        del warned[:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                case()
            except Exception as e:
                frames = [(f.filename, f.lineno) for f in traceback.extract_tb(e.__traceback__)]
                out[name] = {"text": str(e), "frames": frames}
                continue
        out[name] = warned[0] if warned else {"text": None, "frames": []}
    print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def printed() -> dict:
    proc = subprocess.run([sys.executable, "-c", TRIGGERS], capture_output=True, text=True,
                          timeout=300, cwd="/")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# case -> (library, the start of the message it must be), the start typed here from the docs
# of each library's own check, not from the extractor
EXPECTED = {
    "proj_size": ("torch", "proj_size has to be smaller than hidden_size"),
    "hidden0": ("torch", "Expected hidden[0] size"),
    "input_size": ("torch", "input.size(-1) must be equal to input_size"),
    "total_length": ("torch", "Expected total_length to be at least"),
    "grucell": ("torch", "GRUCell: Expected input to be 1D or 2D"),
    "dropout_warning": ("torch", "dropout option adds dropout after all but last"),
    "keras_units": ("keras", "Received an invalid value for argument `units`"),
    "keras_merge_mode": ("keras", "Invalid merge mode"),
    "keras_use_cudnn": ("keras", "Invalid valid received for argument `use_cudnn`"),
    "jax_dropout": ("jax", "Dropout not supported in LSTM reference"),
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_a_message_the_library_prints_is_the_row_the_extractor_read(case, printed, found):
    library, start = EXPECTED[case]
    got = printed[case]
    assert got["text"] and got["text"].startswith(start), got
    hits = lm.find(got["text"], found.values())
    assert hits, f"no row matches what {library} printed: {got['text']!r}"
    best = hits[0]
    assert best.library == library and best.text.split("{")[0].strip() in got["text"], \
        (got["text"], best.text)
    # the library raised it from a place the extractor names: the file and the lines of the
    # `raise` or the `warn` call
    root, _ = lm.source_files(library)
    places = {(str(root / p.file), line) for p in best.places
              for line in range(p.line, p.end_line + 1)}
    assert any((file, line) in places for file, line in got["frames"]), \
        (got["frames"], [(p.file, p.line, p.end_line) for p in best.places])


def test_a_message_built_from_a_parameter_has_a_row_per_call_that_words_it(found):
    """torch's check_hidden_size takes its message as a parameter: its default and the words
    each caller passes are each a message ("Expected hidden[0] size {}, got {}")."""
    texts = {m.text for m in found.values() if m.library == "torch"}
    assert {"Expected hidden size {}, got {}", "Expected hidden[0] size {}, got {}",
            "Expected hidden[1] size {}, got {}"} <= texts


def test_the_trigger_is_the_library_condition(found):
    """The trigger of torch's proj_size check is its `if` test, read from the source."""
    (msg,) = [m for m in found.values() if m.text == "proj_size has to be smaller than hidden_size"]
    assert msg.places[0].trigger == "proj_size >= hidden_size"
    assert msg.places[0].function == "RNNBase.__init__"
    assert msg.places[0].kind == "ValueError"


def test_a_pasted_line_with_a_prefix_and_values_matches_its_message(found):
    line = ("ValueError: Received an invalid value for argument `units`, expected a positive "
            "integer, got 0.")
    assert {m.library for m in lm.find(line, found.values())} == {"keras", "tf_keras"}
    assert not lm.find("ValueError: Received an invalid value for argument `filters`",
                       found.values())


def test_each_library_has_its_recurrent_code_read(found):
    libraries = {m.library for m in found.values()}
    assert libraries == set(lm.SOURCES)
    assert len(found) >= 140  # issue 59 counted 146 with a narrower reader


# --- the data, against the libraries ---------------------------------------------------------

def test_every_message_of_the_installed_libraries_has_a_row_or_a_reason(found, data):
    missing = [mid for mid in found if mid not in data]
    assert not missing, lm.problems(found, data)


def test_no_row_is_stale(found, data):
    stale = [mid for mid in data if mid not in found]
    assert not stale, f"rows no installed library holds any more: {stale}"


def test_at_least_95_percent_are_explained_and_each_left_out_has_its_reason(found, data):
    left_out = [mid for mid in found if "left_out" in data[mid]]
    assert len(found) - len(left_out) >= 0.95 * len(found), left_out
    for mid in left_out:
        assert all(data[mid]["left_out"][lang].strip() for lang in ("en", "es")), mid


def test_a_row_links_only_to_troubleshooting_anchors_that_exist(data):
    folder = REPO / "docs" / "troubleshooting"
    for mid, row in data.items():
        if "see" not in row:
            continue
        page, anchor = row["see"].split("#")
        for suffix in (".md", ".es.md"):
            text = (folder / page.replace(".md", suffix)).read_text(encoding="utf-8")
            assert f"{{ #{anchor} }}" in text, (mid, row["see"], suffix)


def test_the_data_refuses_a_row_without_both_languages(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("torch-x-000000:\n  en: Do this.\n", encoding="utf-8")
    with pytest.raises(lm.LibraryMessagesError, match="needs `en` and `es`"):
        lm.load_data(bad)
    bad.write_text("torch-x-000000:\n  left_out: no reason given in Spanish\n", encoding="utf-8")
    with pytest.raises(lm.LibraryMessagesError, match="left_out"):
        lm.load_data(bad)


def test_the_page_fails_to_draw_when_the_data_lacks_a_message(tmp_path, found):
    """The build's check: a copy of the data without one row is a problem that names it."""
    data = lm.load_data(DATA)
    dropped = next(iter(found))
    del data[dropped]
    (tmp_path / "data").mkdir()
    import yaml
    (tmp_path / "data" / "library_messages.yml").write_text(yaml.safe_dump(data, allow_unicode=True),
                                                           encoding="utf-8")
    _, problems = lm.render("<!-- library-messages: torch -->", "en", tmp_path)
    assert len(problems) == 1 and dropped in problems[0]
    data["torch-no-such-message-000000"] = {"en": "x", "es": "x"}
    data[dropped] = {"en": "x", "es": "x"}
    (tmp_path / "data" / "library_messages.yml").write_text(yaml.safe_dump(data, allow_unicode=True),
                                                           encoding="utf-8")
    _, problems = lm.render("<!-- library-messages: torch -->", "en", tmp_path)
    assert len(problems) == 1 and "torch-no-such-message-000000" in problems[0]


def test_each_row_has_a_heading_of_its_own_in_both_languages(found, data):
    for lang, suffix in (("en", ".md"), ("es", ".es.md")):
        page = (REPO / "docs" / "troubleshooting" / f"messages{suffix}").read_text(encoding="utf-8")
        drawn, problems = lm.render(page, lang, REPO)
        assert not problems
        for mid, msg in found.items():
            if "left_out" in data[mid]:
                assert msg.text in drawn, mid
            else:
                assert f"{{ #{mid} }}" in drawn, (lang, mid)
        assert "<!-- library-messages" not in drawn


# --- search -----------------------------------------------------------------------------------

def _pasted(msg: lm.Message) -> str:
    """The message as a reader pastes it: an exception's line ("ValueError: ..."), each
    placeholder filled with a value."""
    text = " ".join("".join(t if k == "lit" else "7" for k, t in msg.parts).split())
    kind = msg.places[0].kind.split(".")[-1]
    return f"{kind}: {text}" if kind.endswith("Error") else text


def test_pasting_each_message_finds_its_row_in_both_languages(site_root, found, data):
    """One batch per language through the site's own search worker in Node (no browser,
    tests/search_node.py): each
    message pasted (its placeholders filled) lists the messages page among the first three
    pages, that page's first result is a row, not the page's top, and the message's own row is
    among its first three (rows of Keras 3 and tf-keras can hold the same words)."""
    rows = [m for mid, m in found.items() if "left_out" not in data[mid]]
    queries = [_pasted(m) for m in rows]
    failed = []
    for lang, prefix in (("en", ""), ("es", "es/")):
        answers = ask(site_root, lang, queries)
        page = f"{prefix}troubleshooting/messages/"
        for msg, query, pages in zip(rows, queries, answers):
            ours = [p for p in pages[:3] if p and p[0]["location"].split("#")[0] == page]
            if not ours:
                failed.append((lang, msg.id, "page not in the first three",
                               [p[0]["location"] for p in pages[:3] if p]))
                continue
            anchors = [r["location"].partition("#")[2] for r in ours[0]]
            if not anchors[0]:
                failed.append((lang, msg.id, "the page's top first", anchors[:3]))
            elif msg.id not in anchors[:3]:
                failed.append((lang, msg.id, "not among the page's first three", anchors[:3]))
    assert not failed, f"{len(failed)} of {2 * len(rows)}: {failed}"
