"""What differs between Keras 2 (tf-keras) and Keras 3 for the recurrent layers, cells and
wrappers, asked of the installed packages, with what the site says to do about each.

Each class of CLASSES is built in both packages and asked, never read from a typed list:
  - arguments: every name of either constructor's signature, plus the names a constructor takes
    through **kwargs (tf-keras's RNN pops `zero_output_for_mask`, Keras 3's LSTM
    `implementation`), found by passing the other package's argument to it. An argument differs
    when one package refuses it (its error, as the package raised it, is kept) or the defaults
    differ (read from the built layer's get_config() where the signature has none).
  - members: the public attributes and methods of a built instance that one package has and the
    other lacks, leaving out those that differ for every layer (a Dense layer shows the same
    difference), and the public methods both have whose parameters differ (reset_states).
Importing tf-keras imports TensorFlow (seconds), so the packages are asked once, in a child
process, and the answer is cached under .cache/ keyed by both installed releases and this file.
It is committed too (results/outputs/keras_migration.json, `make save-outputs` runs `python -m
pipeline.claims.keras_migration --save`): a fresh clone takes it when its key is the key now.
tests/content/test_keras_migration.py asks the packages again for every argument, default and
member it lists.

What to do about each difference (English and Spanish) lives in data/keras_migration.yml, keyed
by `argument:NAME` or `member:NAME`. `problems()` compares the two: a difference the data lacks,
or a row no difference needs, stops the build (pipeline/pages/hooks/generated_sections.py,
tests/content/test_keras_migration.py).

In a page:
  <!-- keras-migration -->   the table: what, which classes, tf-keras, Keras 3, what to do
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path


from pipeline.running.files import write_atomic
from pipeline.running import yaml_load

MARKER = re.compile(r"<!--\s*keras-migration\s*-->")
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "keras_migration"
COMMITTED = ROOT / "results" / "outputs" / "keras_migration.json"  # {"key": ..., "answer": ...}

# Each class and the arguments it cannot be built without (the same in both packages). The
# wrappers' inner layer is made by the package itself: "LSTM" names that package's LSTM.
CLASSES = {
    "LSTM": {"units": 2}, "GRU": {"units": 2}, "SimpleRNN": {"units": 2},
    "RNN": {"cell": ("LSTMCell", {"units": 2})},
    "LSTMCell": {"units": 2}, "GRUCell": {"units": 2}, "SimpleRNNCell": {"units": 2},
    "StackedRNNCells": {"cells": [("LSTMCell", {"units": 2})]},
    "Bidirectional": {"layer": ("LSTM", {"units": 2})},
    "TimeDistributed": {"layer": ("Dense", {"units": 2})},
    "ConvLSTM1D": {"filters": 2, "kernel_size": 3},
    "ConvLSTM2D": {"filters": 2, "kernel_size": 3},
    "ConvLSTM3D": {"filters": 2, "kernel_size": 3},
}
# An input each class can be built on: (batch, time, features...).
INPUTS = {"ConvLSTM1D": (2, 3, 5, 1), "ConvLSTM2D": (2, 3, 5, 5, 1),
          "ConvLSTM3D": (2, 3, 5, 5, 5, 1), "TimeDistributed": (2, 3, 4)}
CELL_INPUT = (2, 4)
# Values passed for an argument the other package's signature has with default None.
SAMPLES = {"seed": 1, "backward_layer": None}
CELLS = ("LSTMCell", "GRUCell", "SimpleRNNCell", "StackedRNNCells")
PACKAGES = {"tf_keras": ("tf-keras", "tf_keras"), "keras": ("Keras", "keras")}

WORDS = {
    "en": {"what": "Argument or member", "classes": "Classes", "do": "What to do",
           "argument": "argument", "member": "member", "default": "default",
           "absent": "none", "refused": "refused:", "params": "parameters",
           "every": "all {n}", "see": "More.", "kwargs": "taken (read from `**kwargs`)"},
    "es": {"what": "Argumento o miembro", "classes": "Clases", "do": "Qué hacer",
           "argument": "argumento", "member": "miembro", "default": "por defecto",
           "absent": "no existe", "refused": "rechazado:", "params": "parámetros",
           "every": "las {n}", "see": "Más.", "kwargs": "aceptado (leído de `**kwargs`)"},
}


class KerasMigrationError(ValueError):
    """The packages or the data cannot be read as expected."""


# ---- asked in the child process (imports tf-keras and Keras 3) ----

def _make(layers, spec):
    """A package's object for a spec of CLASSES: ("LSTM", {...}) or a list of them."""
    if isinstance(spec, list):
        return [_make(layers, s) for s in spec]
    if isinstance(spec, tuple):
        name, kwargs = spec
        return getattr(layers, name)(**kwargs)
    return spec


def _build(layers, name, **extra):
    kwargs = {k: _make(layers, v) for k, v in CLASSES[name].items()}
    return getattr(layers, name)(**kwargs, **extra)


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())}"


def _params(fn) -> dict:
    """A callable's parameters: name -> repr of its default ("" when it has none)."""
    import inspect
    out = {}
    for k, p in inspect.signature(fn).parameters.items():
        if k == "self":
            continue
        if p.kind is p.VAR_KEYWORD:
            k = "**" + k
        elif p.kind is p.VAR_POSITIONAL:
            k = "*" + k
        out[k] = "" if p.default is p.empty else repr(p.default)
    out.pop("instance", None)  # tf-keras's decorators (wrapt) add it; no caller passes it
    return out


def _same(a: dict, b: dict) -> bool:
    """Both refuse it, or both take it with the same default (a default read from **kwargs is
    not known: taken by both is then the same)."""
    if a["accepted"] != b["accepted"]:
        return False
    return not a["accepted"] or a["default"] == b["default"] or "" in (a["default"], b["default"])


def _inherited_default(cls, arg: str) -> str:
    """The default of an argument a constructor takes through **kwargs: from the first class
    of its bases whose constructor names it ("" when none does: it is read from kwargs)."""
    for base in cls.__mro__[1:]:
        try:
            params = _params(base.__init__)
        except (TypeError, ValueError):
            continue
        if arg in params:
            return params[arg]
    return ""


def _instance(np, layers, name):
    """A built instance: a layer called on an input, a cell built for one step's input."""
    layer = _build(layers, name)
    if name in CELLS:
        layer.build(CELL_INPUT)
    else:
        layer(np.zeros(INPUTS.get(name, (2, 3, 4)), "float32"))
    return layer


def _public(obj) -> set:
    return {n for n in dir(obj) if not n.startswith("_")}


def ask_packages() -> dict:
    """Everything the table needs, asked of both installed packages (imports TensorFlow)."""
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import keras
    import tf_keras

    libs = {"tf_keras": tf_keras.layers, "keras": keras.layers}
    dense = {lib: _public(L.Dense(2)) for lib, L in libs.items()}
    out = {"versions": {lib: _version(lib) for lib in libs}, "classes": {}}
    for name in CLASSES:
        sigs = {lib: _params(getattr(L, name).__init__) for lib, L in libs.items()}
        configs = {lib: _build(L, name).get_config() for lib, L in libs.items()}
        args = {}
        names = sorted({k for s in sigs.values() for k in s if not k.startswith("*")}
                       - set(CLASSES[name]))
        for arg in names:
            row = {}
            for lib, L in libs.items():
                other = "keras" if lib == "tf_keras" else "tf_keras"
                if arg in sigs[lib]:
                    row[lib] = {"accepted": True, "default": sigs[lib][arg]}
                    continue
                # Not in the signature: taken through **kwargs? Pass it a value (the other's
                # default, or a sample where that is None, which a layer may let pass).
                value = configs[other].get(arg)
                value = SAMPLES.get(arg) if value is None else value
                try:
                    _build(L, name, **{arg: value})
                    row[lib] = {"accepted": True,
                                "default": _inherited_default(getattr(L, name), arg)}
                except Exception as e:  # noqa: BLE001 - what the package raises is the answer
                    row[lib] = {"accepted": False, "error": _error(e)}
            if not _same(row["tf_keras"], row["keras"]):
                args[arg] = row
        members = {}
        built = {lib: _instance(np, L, name) for lib, L in libs.items()}
        pub = {lib: _public(b) for lib, b in built.items()}
        for lib in libs:
            other = "keras" if lib == "tf_keras" else "tf_keras"
            for m in sorted(pub[lib] - pub[other]):
                if (m in dense[lib]) != (m in dense[other]):
                    continue  # every layer differs so: not the recurrent layers' difference
                try:
                    getattr(built[other], m)
                    error = None
                except Exception as e:  # noqa: BLE001
                    error = _error(e)
                members[m] = {lib: {"has": True}, other: {"has": False, "error": error}}
        for m in sorted(pub["tf_keras"] & pub["keras"]):
            fns = {lib: getattr(type(built[lib]), m, None) for lib in libs}
            if not all(callable(f) and not isinstance(f, type) for f in fns.values()):
                continue
            try:
                ps = {lib: _params(f) for lib, f in fns.items()}
            except (TypeError, ValueError):
                continue
            if list(ps["tf_keras"]) != list(ps["keras"]):
                dense_fns = {lib: getattr(L.Dense, m, None) for lib, L in libs.items()}
                if all(callable(f) for f in dense_fns.values()) and all(
                        fns[lib] is dense_fns[lib] for lib in libs):
                    continue  # the base Layer's method in both: every layer differs so
                members[m] = {lib: {"has": True, "params": list(ps[lib])} for lib in libs}
        out["classes"][name] = {"arguments": args, "members": members}
    return out


def _version(lib: str) -> str:
    from importlib.metadata import version
    return version(PACKAGES[lib][0]).split("+")[0]


# ---- in the build: cached answer, data, table ----

def cache_key() -> str:
    versions = "-".join(_version(lib) for lib in PACKAGES)
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    return f"{versions}-{digest}"


def differences(refresh: bool = False) -> dict:
    """The packages' answer, from the cache or a child process that asks them."""
    key = cache_key()
    path = CACHE / f"{key}.json"
    if path.exists() and not refresh:
        return json.loads(path.read_text())
    committed = _committed()
    if committed.get("key") == key and isinstance(committed.get("answer"), dict) and not refresh:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(committed["answer"], indent=1, sort_keys=True))
        return committed["answer"]
    proc = subprocess.run([sys.executable, "-m", "pipeline.claims.keras_migration"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise KerasMigrationError("asking tf-keras and Keras 3 failed: "
                                  + (proc.stderr.strip().splitlines() or ["no output"])[-1])
    answer = json.loads(proc.stdout)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(answer, indent=1, sort_keys=True))
    return answer


def keys(answer: dict) -> dict[str, list[str]]:
    """Each difference's key (argument:NAME, member:NAME) and the classes it holds for."""
    out: dict[str, list[str]] = {}
    for name, c in answer["classes"].items():
        for kind in ("argument", "member"):
            for k in c[kind + "s"]:
                out.setdefault(f"{kind}:{k}", []).append(name)
    return out


def load_data(path: Path) -> dict[str, dict]:
    data = yaml_load.load(path.read_text(encoding="utf-8")) or {}
    for key, row in data.items():
        if not isinstance(row, dict) or not all(isinstance(row.get(lang), str) for lang in WORDS):
            raise KerasMigrationError(f"{path.name}: {key} needs en and es")
    return data


def problems(answer: dict, data: dict[str, dict]) -> list[str]:
    found = keys(answer)
    out = [f"data/keras_migration.yml has no row for {k} (differs in {', '.join(v)})"
           for k, v in found.items() if k not in data]
    out += [f"data/keras_migration.yml: {k} differs in no class of the installed packages"
            for k in data if k not in found]
    return out


def _code(text: str) -> str:
    text = " ".join(text.split())
    ticks = max((len(t) for t in re.findall(r"`+", text)), default=0) + 1
    pad = " " if text.startswith("`") or text.endswith("`") or ticks > 1 else ""
    return "`" * ticks + pad + text + pad + "`" * ticks


def _cell(kind: str, entry: dict, w: dict) -> str:
    """One package's side of a difference, as the package answered."""
    if kind == "argument":
        if entry["accepted"]:
            if not entry["default"]:
                return w["kwargs"]
            return f"{w['default']} {_code(entry['default'])}"
        return f"{w['refused']} {_code(entry['error'])}"
    if "params" in entry:
        return f"{w['params']} {_code('(' + ', '.join(entry['params']) + ')')}"
    if entry["has"]:
        return "✓"
    return _code(entry["error"]) if entry.get("error") else w["absent"]


def _unsearched(text: str) -> str:
    """Shown, but left out of search (pipeline/pages/search_text.py): class lists and
    parameter lists are not what a reader pastes, and each language's index has a size limit."""
    return f"<span data-search-exclude>{text}</span>"


def _quiet(cell: str) -> str:
    """A side of a difference: an argument's error stays searchable (readers paste it); the
    rest not. A missing member's AttributeError is found by the member's name, in its row."""
    return cell if "Error" in cell and "AttributeError" not in cell else _unsearched(cell)


def render_table(answer: dict, data: dict[str, dict], lang: str) -> str:
    w = WORDS[lang]
    v = answer["versions"]
    head = (f"| {w['what']} | {w['classes']} | tf-keras {v['tf_keras']} | Keras {v['keras']} "
            f"| {w['do']} |\n|---|---|---|---|---|")
    # One row per difference that reads the same in several classes (an error naming its class
    # aside): the first class's text is shown.
    rows: dict[tuple, list] = {}
    for name in (n for n in CLASSES if n in answer["classes"]):
        c = answer["classes"][name]
        for kind in ("argument", "member"):
            for k, entry in c[kind + "s"].items():
                sides = tuple(_cell(kind, entry[lib], w) for lib in PACKAGES)
                same = tuple(re.sub(rf"\b{name}\b", "CLASS", t) for t in sides)
                rows.setdefault((kind, k) + same, [sides, []])[1].append(name)
    lines, previous = [head], None
    for (kind, k, *_), ((k2, k3), classes) in sorted(rows.items(), key=lambda r: r[0][:2]):
        # What to do once a difference (its later rows differ only in classes and sides).
        row = data.get(f"{kind}:{k}", {})
        advice = " ".join(row.get(lang, "").split())
        if row.get("see"):
            advice += f" [{w['see']}]({row['see']})"
        if (kind, k) == previous:
            advice = "″"  # as the row above
        previous = (kind, k)
        names = w["every"].format(n=len(classes)) if len(classes) == len(CLASSES) else \
            ", ".join(classes)
        lines.append(f"| {w[kind]} `{k}` | {_unsearched(names)} | {_quiet(k2)} | {_quiet(k3)} "
                     f"| {advice} |")
    return "\n".join(lines)


def render(markdown: str, lang: str, root: Path) -> tuple[str, list[str]]:
    """The page with its keras-migration marker drawn, and the problems found."""
    if not MARKER.search(markdown):
        return markdown, []
    answer = differences()
    data = load_data(root / "data" / "keras_migration.yml")
    issues = problems(answer, data)
    lang = lang if lang in WORDS else "en"
    table = render_table(answer, data, lang)
    return MARKER.sub(lambda m: table, markdown), issues


def _committed() -> dict:
    try:
        found = json.loads(COMMITTED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def save() -> str:
    """Commit the cached answer for the installed releases (asking the packages if none is
    cached) to COMMITTED; returns the line that says so."""
    answer = differences()
    text = json.dumps({"key": cache_key(), "answer": answer}, indent=1, sort_keys=True) + "\n"
    if COMMITTED.is_file() and COMMITTED.read_text(encoding="utf-8") == text:
        return f"{COMMITTED.relative_to(ROOT)}: unchanged"
    COMMITTED.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(COMMITTED, text)
    return f"{COMMITTED.relative_to(ROOT)}: saved ({cache_key()})"


if __name__ == "__main__":
    if sys.argv[1:] == ["--save"]:
        print(save())
    elif sys.argv[1:]:
        sys.exit("usage: python -m pipeline.claims.keras_migration [--save]")
    else:
        print(json.dumps(ask_packages()))
