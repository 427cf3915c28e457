"""docs/troubleshooting/pytorch.md#pytorch-arguments: every message PyTorch's RNN code raises or warns
about its arguments is on the page, and every one the page quotes is in the installed PyTorch.

- Python: every message that `torch/nn/modules/rnn.py` and `torch/nn/utils/rnn.py` raise (an
  AssertionError aside: an internal invariant) or warn, read from their syntax tree, must be
  quoted by an entry of data/messages.yml that the page shows, and the reverse.
- C++: the compiled library has no structure to enumerate, so the messages it writes about
  devices, dtypes, contiguity, cells and lengths are listed here (CPP) by their fixed pieces, and
  the library is scanned for the families those pieces belong to (CPP_FAMILIES): a new message
  of such a family fails the test until the page has it.
- Each message a CPU can cause is printed by snippets/troubleshooting/pytorch_arguments.py (the
  build checks its `output` backing); the three only a GPU prints are marked on the page
  (tests/content/test_troubleshooting.py, ONCE_CUDNN_RUNS and PYTORCH_GPU_ONLY).
"""
from __future__ import annotations

import ast
import functools
import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from conftest import REPO, TROUBLESHOOTING, printed

MESSAGES = yaml.safe_load((REPO / "data" / "messages.yml").read_text(encoding="utf-8"))
SNIPPET = "troubleshooting/pytorch_arguments.py"
PAGES = TROUBLESHOOTING  # every troubleshooting page of a language, read as one (conftest.py)
PYTHON_FILES = ("nn/modules/rnn.py", "nn/utils/rnn.py")
# The C++ messages: entry -> (library under torch/lib, its fixed pieces as the library holds them)
CPP = {
    "torch-device-parameter": ("libtorch_cpu.so", ["Input and ", " tensor at ",
                               " tensors are not at the same device, found input tensor at "]),
    "torch-device-hidden": ("libtorch_cpu.so", ["Input and ", " tensor at ",
                            " tensors are not at the same device, found input tensor at "]),
    "torch-dtype-hidden": ("libtorch_cuda.so", ["Input and ",
                           " tensors are not the same dtype, found input tensor with "]),
    "torch-hx-contiguous": ("libtorch_cuda.so", ["rnn: hx is not contiguous"]),
    "torch-cx-contiguous": ("libtorch_cuda.so", ["rnn: cx is not contiguous"]),
    "torch-cell-input-size": ("libtorch_cpu.so", ["input has inconsistent input_size: got "]),
    "torch-cell-batch": ("libtorch_cpu.so", ["Input batch size ", " doesn't match hidden"]),
    "torch-lengths-cpu": ("libtorch_cpu.so",
                          ["'lengths' argument should be a 1D CPU int64 tensor, but got "]),
    "torch-lengths-zero": ("libtorch_cpu.so", ["Length of all samples has to be greater than 0, "
                                               "but found an element in 'lengths' that is <= 0"]),
    "torch-lengths-count": ("libtorch_cpu.so",
                            ["Expected `len(lengths)` to be equal to batch_size, but got "]),
    "pytorch-enforce-sorted": ("libtorch_cpu.so", ["`lengths` array must be sorted in decreasing "
                                                   "order when `enforce_sorted` is True."]),
}
# Families of C++ messages scanned for in the libraries: every string of the library that holds
# one of these words must be a piece of CPP, or listed in NOT_READERS with the reason a reader
# of nn.LSTM cannot meet it.
CPP_FAMILIES = {
    "libtorch_cuda.so": ["rnn: ", "tensors are not the same dtype"],
    "libtorch_cpu.so": ["tensors are not at the same device", "has inconsistent input_size",
                        "'lengths' argument", "Length of all samples", "Expected `len(lengths)`"],
}
NOT_READERS = {
    # nn.GRU and nn.RNN take one state tensor: a tuple fails in Python first ('tuple' object has
    # no attribute 'dim'), so only a direct call of torch's internal ops reaches this check.
    "rnn: illegal defined cx for non-LSTM RNN",
}


def _torch() -> Path:
    return Path(importlib.util.find_spec("torch").origin).parent


@functools.lru_cache(maxsize=None)
def _library(name: str) -> bytes:
    return (_torch() / "lib" / name).read_bytes()


def strings_with(library: str, word: str) -> set[str]:
    """Every NUL-terminated string of a compiled library that holds `word`."""
    data, found, at = _library(library), set(), 0
    needle = word.encode()
    while (at := data.find(needle, at)) >= 0:
        start = data.rfind(b"\0", 0, at) + 1
        end = data.find(b"\0", at)
        found.add(data[start:end].decode(errors="replace").strip())
        at = end
    return found


def _render(node: ast.AST, scope: dict[str, list[ast.AST]], seen: frozenset = frozenset()
            ) -> list[str]:
    """The text a message expression makes, with "{}" where Python fills something in; a name
    is read from what the function assigns to it or passes for it."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # a name inside: filled in
        return [a + b for a in _render(node.left, {}, seen) for b in _render(node.right, {}, seen)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "format":
        return _render(node.func.value, scope, seen)
    if isinstance(node, ast.Name) and node.id not in seen:
        return [t for value in scope.get(node.id, [])
                for t in _render(value, scope, seen | {node.id})] or ["{}"]
    return ["{}"]


def _scopes(tree: ast.Module) -> dict[ast.AST, dict[str, list[ast.AST]]]:
    """For each function: what each name may hold (its assignments, a parameter's default and
    the strings the module passes for that parameter by keyword or position)."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    scopes = {}
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        scope: dict[str, list[ast.AST]] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        scope.setdefault(target.id, []).append(node.value)
        params = fn.args.args
        defaults = dict(zip([a.arg for a in params[len(params) - len(fn.args.defaults):]],
                            fn.args.defaults))
        for index, param in enumerate(params):
            values = [defaults[param.arg]] if param.arg in defaults else []
            for call in calls:
                named = getattr(call.func, "attr", getattr(call.func, "id", None))
                if named != fn.name:
                    continue
                shift = 1 if params and params[0].arg == "self" else 0
                if 0 <= index - shift < len(call.args):
                    values.append(call.args[index - shift])
                values += [k.value for k in call.keywords if k.arg == param.arg]
            if values:
                scope.setdefault(param.arg, []).extend(values)
        scopes[fn] = scope
    return scopes


def python_messages() -> dict[str, list[str]]:
    """{template: [file, ...]}: every message the two files raise or warn, "{}" for what Python
    fills in."""
    found: dict[str, list[str]] = {}
    for rel in PYTHON_FILES:
        tree = ast.parse((_torch() / rel).read_text(encoding="utf-8"))
        scopes = _scopes(tree)
        for fn, scope in scopes.items():
            for node in ast.walk(fn):
                call = None
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                        and getattr(node.exc.func, "id", "") != "AssertionError":
                    call = node.exc
                elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "warn":
                    call = node
                if call is None or not call.args:
                    continue
                for text in _render(call.args[0], scope):
                    if text.strip("{} "):
                        found.setdefault(text, []).append(rel)
    return found


def pieces(template: str) -> list[str]:
    return [p for p in (part.strip() for part in template.split("{}")) if p]


def page_entries() -> dict[str, dict]:
    """The entries of data/messages.yml about the arguments: those the snippet prints, those of
    CPP, and the enforce_sorted message, shown on the page."""
    return {mid: e for mid, e in MESSAGES.items()
            if e.get("output") == SNIPPET or mid in CPP}


def _covers(entry: dict, template: str) -> bool:
    text = " ".join(entry["text"].split())
    return all(" ".join(p.split()) in text for p in pieces(template))


def test_the_reader_of_the_python_files_finds_their_messages():
    """The reader itself, on messages known to be there: one written in the raise, one passed
    as an argument (check_hidden_size's `msg`), one assigned to a name first, one warning."""
    found = python_messages()
    for template in ("input.size(-1) must be equal to input_size. Expected {}, got {}",
                     "Expected hidden[0] size {}, got {}", "Expected hidden size {}, got {}",
                     "For batched 3-D input, hx and cx should also be 3-D but got ({}-D, {}-D) "
                     "tensors",
                     "pad_sequence: Expected iterable for input sequences, but got arg of type: {}"):
        assert template in found, template
    assert any(t.startswith("dropout option adds dropout") for t in found)
    assert len(found) >= 35, len(found)


@pytest.mark.parametrize("template", sorted(python_messages()))
def test_every_python_message_is_on_the_page(template):
    entries = page_entries()
    assert any(_covers(e, template) for e in entries.values()), \
        f"PyTorch raises {template!r} ({python_messages()[template]}); add it to data/messages.yml " \
        f"and docs/troubleshooting/pytorch.md#pytorch-arguments"


def test_every_message_the_page_quotes_is_in_the_installed_pytorch():
    """Each entry is a Python message of the two files, or a C++ one of CPP found in its
    library."""
    templates = python_messages()
    for mid, entry in page_entries().items():
        if mid in CPP:
            library, frags = CPP[mid]
            data = _library(library)
            for frag in frags:
                assert frag.encode() in data, (mid, frag, library)
                assert frag.strip() in entry["text"] or frag.strip() in entry["text"].replace(
                    "cuda:0", "").replace("cpu", ""), (mid, frag)
        else:
            assert any(_covers(entry, t) and len(pieces(t)) for t in templates), \
                f"{mid}: {entry['text']!r} is not a message of {PYTHON_FILES}"


@pytest.mark.parametrize("library", sorted(CPP_FAMILIES))
def test_no_cpp_message_of_these_families_is_missing(library):
    known = {frag.strip() for lib, frags in CPP.values() if lib == library for frag in frags}
    for word in CPP_FAMILIES[library]:
        found = strings_with(library, word)
        assert found, (library, word)
        for text in found:
            if text in NOT_READERS:
                continue
            assert any(text in k or k in text for k in known), \
                f"{library} has {text!r}; add it to CPP, data/messages.yml and the page"


def test_each_entry_is_on_the_page_in_both_languages():
    for lang, page in PAGES.items():
        # the arguments section and its GPU part, each on the page that holds it
        section = page.section("pytorch-arguments") + page.section("pytorch-gpu-arguments")
        for mid in page_entries():
            if mid == "pytorch-enforce-sorted":  # its own entry, linked from the section
                assert "(#pytorch-enforce-sorted)" in section, lang
                continue
            assert section.count(f"<!-- message: {mid} -->") == 1, (lang, mid)


def test_what_the_page_says_the_cpu_does_is_what_the_program_printed():
    """The GPU-only entry says a CPU accepts a non-contiguous state and gives another message
    for a float64 one; the sizes paragraph reads the bidirectional line."""
    out = printed(SNIPPET)
    assert "GRU, h0 transposed (not contiguous): no error" in out
    assert re.search(r"GRU, float64 h0: RuntimeError: mat1 and mat2 must have the same dtype", out)
    assert ("LSTM(8, 16, num_layers=3, bidirectional=True, batch_first=True) on (4, 5, 8) -> "
            "output (4, 5, 32) h_n (6, 4, 16) c_n (6, 4, 16)") in out
    # every case printed a message, but the two the page says pass on a CPU
    cases = [line for line in out.splitlines() if not line.startswith(("--", "LSTM(8, 16"))]
    quiet = [line for line in cases if line.endswith(": no error")]
    assert {line.split(":")[0] for line in quiet} == {
        "GRU, h0 transposed (not contiguous)", "lengths as a list, traced",
        "dropout with one layer"}, quiet


def test_a_packed_sequence_moves_its_data_and_keeps_batch_sizes_on_the_cpu():
    """The packing entry's advice (read from torch/nn/utils/rnn.py): PackedSequence.to converts
    `data` only."""
    source = (_torch() / "nn/utils/rnn.py").read_text(encoding="utf-8")
    assert "Why not convert `batch_sizes`?" in source
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence
    packed = pack_padded_sequence(torch.randn(2, 3, 1), [3, 2], batch_first=True)
    moved = packed.to(torch.float64)
    assert moved.data.dtype == torch.float64 and moved.batch_sizes.dtype == torch.int64
