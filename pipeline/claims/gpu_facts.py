"""Sentences about the GPU runs, written by the build from the records under results/.

A page never types what a GPU run measured, which releases it had, or whether a program ran on a
GPU at all: it puts a marker where the sentence goes, and the build writes the sentence from the
records, in the page's language. A new GPU run, or a second GPU, changes the sentences with no
page edit; a record of an older version of its program is named as such.

    <!-- gpu-runs: c/lstm_v8.c c/lstm_train.c -->   which of these programs a GPU ran, where,
                                                    with which releases; or that none did yet
    <!-- gpu-fact: NAME -->                         one finding of a GPU run (FACTS below): its
                                                    figures, machine and releases

check() fails the build on a typed sentence that says what a GPU run did or did not do ("no GPU
run is recorded", "no se ejecutó en una GPU"): such a sentence is a marker. Each fact reads its
record's data files or output; one that no longer reads as expected fails the build (FactError)
rather than print a wrong sentence.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Callable

from pipeline.claims import prose
from pipeline.records import conditions, store as records

MARKER = re.compile(r"<!--\s*gpu-(runs|fact):\s*(.+?)\s*-->")


class FactError(ValueError):
    pass


# --- words ---------------------------------------------------------------------------------------

W = {
    "en": {"and": "and", "none_yet": "No GPU run of {what} is recorded yet.",
           "these": "these programs", "older": "an older version of {names}",
           "ran_all": "A GPU ran {count}: {machine}, on {date}{older}.",
           "ran_some": "A GPU ran {names}: {machine}, on {date}{older}. No GPU run of {missing} "
                       "is recorded yet.",
           "all_n": "all {n} of these programs", "it": "{name}", "with": "with",
           "none_machine": "No GPU is on record yet.",
           "older_note": " (for {what})"},
    "es": {"and": "y", "none_yet": "Aún no hay registrada ninguna ejecución en GPU de {what}.",
           "these": "estos programas", "older": "una versión anterior de {names}",
           "ran_all": "Una GPU ejecutó {count}: {machine}, el {date}{older}.",
           "ran_some": "Una GPU ejecutó {names}: {machine}, el {date}{older}. Aún no hay "
                       "registrada ninguna ejecución en GPU de {missing}.",
           "all_n": "los {n} programas", "it": "{name}", "with": "con",
           "none_machine": "Aún no hay ninguna GPU registrada.",
           "older_note": " (de {what})"},
}


def _join(items: list[str], lang: str) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {W[lang]['and']} " + items[-1]


def number(value: float, lang: str, digits: int = 2) -> str:
    """A ratio or time with `digits` significant digits (at least one decimal under 10), in the
    language's decimal mark."""
    text = f"{value:.{digits}g}" if value < 10 ** digits else f"{value:.0f}"
    if "e" in text:
        text = f"{value:.{max(digits - 1, 0)}f}"
    return text.replace(".", ",") if lang == "es" else text


def ratio(value: float, lang: str) -> str:
    """A speed-up: two decimals under 1 (0.69), one under 10 (2.0, 9.4), none above (16)."""
    text = f"{value:.2f}" if value < 1 else f"{value:.1f}" if value < 10 else f"{value:.0f}"
    return text.replace(".", ",") if lang == "es" else text


def sci(value: float, lang: str) -> str:
    """5.3e-05, or 5,3e-05 in Spanish: as the programs print their errors."""
    text = f"{value:.1e}"
    return text.replace(".", ",") if lang == "es" else text


def machine_name(record: records.Record) -> str:
    return record.machine.removeprefix("GPU: ")


def frameworks_of(snippet_path: Path, helpers: tuple[Path, ...] = ()) -> tuple[str, ...]:
    """The provenance keys of the frameworks a Python program imports (its helpers' too)."""
    found = set()
    for path in (snippet_path, *helpers):
        if path.suffix != ".py":
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError):
            continue
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            found.update(n.split(".")[0] for n in names)
    keys = {k for k, _ in conditions.LIBRARIES}
    return tuple(sorted(found & keys))


def machine_with_releases(record: records.Record, frameworks: tuple[str, ...] | None,
                          lang: str, more: str = "") -> str:
    """"NVIDIA H200 (PyTorch 2.11.0, cuDNN 9.19.0)": the machine and what the program ran with,
    and `more` conditions after them."""
    said = ", ".join(conditions.releases(record.data["provenance"], frameworks))
    said = "; ".join(x for x in (said, more) if x)
    return machine_name(record) + (f" ({said})" if said else "")


# --- <!-- gpu-runs: ... --> ----------------------------------------------------------------------

def runs_sentence(machines: list[records.Machine], rels: list[str], lang: str,
                  snippets_root: Path | None = None) -> str:
    """Which of `rels` each GPU on record ran, when, with which releases."""
    w = W[lang]
    name = lambda rel: f"`{rel.rsplit('/', 1)[-1]}`"  # noqa: E731  as a reader saves it
    what = name(rels[0]) if len(rels) == 1 else w["these"]
    by_machine: dict[str, list[records.Record]] = {}
    for rel in rels:
        for r in records.for_snippet(machines, rel):
            by_machine.setdefault(r.slug, []).append(r)
    if not by_machine:
        return w["none_yet"].format(what=what)
    sentences = []
    for slug, recs in sorted(by_machine.items()):
        ran = [r.snippet for r in recs]
        frameworks = {f for rel in ran for f in frameworks_of(Path(snippets_root) / rel)} \
            if snippets_root is not None else None
        who = machine_with_releases(recs[0], tuple(sorted(frameworks)) if frameworks is not None
                                    else None, lang)
        stale = [name(r.snippet) for r in recs if r.stale]
        older = w["older_note"].format(what=w["older"].format(names=_join(stale, lang))) \
            if stale else ""
        date = max(r.date for r in recs)
        if len(ran) == len(rels):
            count = w["it"].format(name=name(rels[0])) if len(rels) == 1 \
                else w["all_n"].format(n=len(rels))
            sentences.append(w["ran_all"].format(machine=who, count=count, date=date,
                                                 older=older))
        else:
            missing = [name(r) for r in rels if r not in ran]
            sentences.append(w["ran_some"].format(
                machine=who, names=_join([name(r) for r in ran], lang), date=date, older=older,
                missing=_join(missing, lang)))
    return " ".join(sentences)


# --- <!-- gpu-fact: NAME --> ---------------------------------------------------------------------

def _current(machines, rel: str) -> list[records.Record]:
    """Every GPU record of one program, current ones only: a finding is never written from a
    record of an older version of its program."""
    return [r for r in records.for_snippet(machines, rel) if not r.stale]


def _find(pattern: str, text: str, rel: str) -> re.Match:
    m = re.search(pattern, text, re.M)
    if not m:
        raise FactError(f"{rel}: its recorded output no longer reads as expected "
                        f"(no match for {pattern!r}); update pipeline/claims/gpu_facts.py")
    return m


def _data(record: records.Record, name: str) -> dict:
    path = record.data_dir / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FactError(f"{record.where(Path.cwd())}: no readable {name} ({e})") from None


def _medians(record: records.Record, name: str, rel: str, variants: tuple[str, ...]) -> list[float]:
    """The median time of each variant in the record's data file `name`, in that order."""
    ms = {row["variant"]: row["median"] for row in _data(record, name)["results"]}
    try:
        return [ms[v] for v in variants]
    except KeyError as e:
        raise FactError(f"{rel}: no variant {e} in its recorded data") from None


def _each(machines, rel: str, lang: str, frameworks: tuple[str, ...],
          say: Callable[[records.Record, str], str],
          more: Callable[[records.Record], str] = lambda r: "") -> str:
    """One sentence per GPU that ran `rel`, each opening with the machine and its releases (and
    `more` conditions); or that no GPU ran it yet."""
    recs = _current(machines, rel)
    if not recs:
        return W[lang]["none_yet"].format(what=f"`{rel.rsplit('/', 1)[-1]}`")
    gpu = "la GPU " if lang == "es" else ""
    return " ".join(say(r, gpu + machine_with_releases(r, frameworks, lang, more(r)))
                    for r in recs)


def _capability(r: records.Record, lang: str) -> str:
    cc = r.data["provenance"].get("gpu_compute_capability")
    return "" if not cc else f"capacidad de cómputo {cc}" if lang == "es" else \
        f"compute capability {cc}"


def fact_tf32(machines, lang):
    rel = "troubleshooting/tf32_precision.py"

    def say(r, who):
        out = r.data["stdout"]
        row = lambda label: _find(  # noqa: E731
            re.escape(label) + r".*?LSTM (\S+)\s+GRU (\S+)", out, rel).groups()
        d, off, own = row("defaults "), row("allow_tf32 = False"), row("cuDNN off")
        e = lambda pair: (sci(float(pair[0]), lang), sci(float(pair[1]), lang))  # noqa: E731
        (d1, d2), (o1, o2), (p1, p2) = e(d), e(off), e(own)
        if lang == "es":
            return (f"En {who}, el error máximo frente a la CPU "
                    f"fue de {d1} (LSTM) y {d2} (GRU) con los valores por defecto, {o1} y {o2} "
                    f"con `allow_tf32 = False`, y {p1} y {p2} con los kernels propios de PyTorch.")
        return (f"On {who}, the largest difference from the CPU was "
                f"{d1} (LSTM) and {d2} (GRU) with the defaults, {o1} and {o2} with "
                f"`allow_tf32 = False`, and {p1} and {p2} with PyTorch's own kernels.")
    return _each(machines, rel, lang, ("torch",), say, lambda r: _capability(r, lang))


def fact_determinism(machines, lang):
    rel = "troubleshooting/determinism.py"

    def say(r, who):
        rows = re.findall(r"same within a process: (\w+)\s+same in a new process: (\w+)",
                          r.data["stdout"])
        if not rows:
            _find("same within a process", "", rel)
        same = sum(a == b == "True" for a, b in rows)
        if lang == "es":
            return (f"En {who}, {same} de {len(rows)} configuraciones (dropout 0 y 0,3; con "
                    f"semilla, con `use_deterministic_algorithms(True)` y con "
                    f"`CUBLAS_WORKSPACE_CONFIG`) repitieron la suma de todos los gradientes de un "
                    f"paso hasta el último bit, en el mismo proceso y en uno nuevo.")
        return (f"On {who}, {same} of {len(rows)} settings (dropout 0 and 0.3; seeded, with "
                f"`use_deterministic_algorithms(True)`, and with `CUBLAS_WORKSPACE_CONFIG`) "
                f"repeated the sum of all gradients of a step to the last bit, in the same "
                f"process and in a new one.")
    return _each(machines, rel, lang, ("torch",), say)


def fact_cuda_graph(machines, lang):
    rel = "troubleshooting/cuda_graph.py"

    def say(r, who):
        rows = re.findall(r"^(LSTM|GRU) (inference|forward and backward)\s*: (.*)$",
                          r.data["stdout"], re.M)
        if not rows:
            _find("captured and replayed", "", rel)
        ok = sum("same as eager: True" in text for *_, text in rows)
        if lang == "es":
            return (f"En {who}, {ok} de {len(rows)} casos (LSTM y GRU, inferencia y pasada "
                    f"hacia delante y hacia atrás) se capturaron y reprodujeron con la misma "
                    f"salida y el mismo gradiente de los pesos recurrentes de la primera capa "
                    f"que la llamada normal.")
        return (f"On {who}, {ok} of {len(rows)} cases (LSTM and GRU, inference and forward and "
                f"backward) were captured and replayed with the same output and the same "
                f"gradient of the first layer's recurrent weights as the eager call.")
    return _each(machines, rel, lang, ("torch",), say)


def fact_longest_sequence(machines, lang):
    rel = "troubleshooting/longest_sequence.py"

    def say(r, who):
        out = r.data["stdout"]
        lstm = _find(r"nn\.LSTM: longest sequence in one call: (\d+); one step more: "
                     r"\w+: cuDNN error: (\w+)", out, rel)
        gru = _find(r"nn\.GRU: longest sequence in one call: (\d+)", out, rel)
        n = f"{int(lstm.group(1)):,}".replace(",", "." if lang == "es" else ",")
        same = lstm.group(1) == gru.group(1)
        if lang == "es":
            return (f"En {who}, la secuencia más larga de una llamada fue de {n} pasos para "
                    f"`nn.LSTM`" + (" y para `nn.GRU`" if same else "") + f"; un paso más dio "
                    f"`{lstm.group(2)}`.")
        return (f"On {who}, the longest sequence of one call was {n} steps for `nn.LSTM`"
                + (" and for `nn.GRU`" if same else "") + f"; one step more gave "
                f"`{lstm.group(2)}`.")
    return _each(machines, rel, lang, ("torch",), say)


def fact_packing_cost(machines, lang):
    rel = "benchmarks/packed_sequence.py"

    def say(r, who):
        pad, srt, uns = _medians(r, "packed_sequence.json", rel, (
            "padded", "packed, enforce_sorted=True", "packed, enforce_sorted=False"))
        n = lambda v: number(v, lang, 3)  # noqa: E731
        if lang == "es":
            return (f"En {who}, un paso de entrenamiento con el lote relleno tardó {n(pad)} ms "
                    f"(mediana), empaquetado y ya ordenado {n(srt)} ms, y empaquetado con "
                    f"`enforce_sorted=False` {n(uns)} ms.")
        return (f"On {who}, a training step took {n(pad)} ms padded (median), {n(srt)} ms "
                f"packed from a sorted batch, and {n(uns)} ms packed with "
                f"`enforce_sorted=False`.")
    return _each(machines, rel, lang, ("torch",), say)


def fact_cell_loop(machines, lang):
    rel = "benchmarks/torch_lstm_vs_cell_loop.py"

    def say(r, who):
        loop_train, lstm_train, loop_infer, lstm_infer = _medians(
            r, "torch_lstm_vs_cell_loop.json", rel, (
                "loop over nn.LSTMCell · train", "nn.LSTM · train",
                "loop over nn.LSTMCell · inference", "nn.LSTM · inference"))
        train, infer = loop_train / lstm_train, loop_infer / lstm_infer
        if lang == "es":
            return (f"En {who}, el bucle sobre `nn.LSTMCell` fue {ratio(train, lang)} veces más "
                    f"lento que `nn.LSTM` en entrenamiento y {ratio(infer, lang)} veces en "
                    f"inferencia.")
        return (f"On {who}, the loop over `nn.LSTMCell` was {ratio(train, lang)}× slower than "
                f"`nn.LSTM` in training and {ratio(infer, lang)}× in inference.")

    def sizes(r):
        data = _data(r, "torch_lstm_vs_cell_loop.json")
        said = _find(r"\((batch \d+, \d+ steps, \d+ units)\)", data["title"], rel).group(1)
        # FP32 in both variants: the program turns TF32 off (its record's source is current)
        fp32 = "FP32 sin TF32" if lang == "es" else "FP32 with TF32 off"
        if lang == "es":
            said = said.replace("batch", "lote").replace("steps", "pasos").replace("units",
                                                                                   "unidades")
        return f"{said}, {fp32}" if TF32_OFF in program_text(rel) else said
    return _each(machines, rel, lang, ("torch",), say, sizes)


LEVEL = 0.05  # CPU time / GPU time within 5 % of 1: neither device is faster


def fact_crossover(machines, lang):
    """Where the CPU beat the GPU on a small LSTM, per mode and batch, from the record's data:
    what a reader with a small model asks, in the prose of both languages."""
    rel = "benchmarks/cpu_gpu_crossover.py"

    def say(r, who):
        data = _data(r, "cpu_gpu_crossover.json")
        shape = _find(r"\((\d+ steps, \d+ features)", data["title"], rel).group(1)
        rows = [(row["mode"], row["batch"], row["x"], row["median"]) for row in data["results"]]
        cpu = data["provenance"].get("cpu_model", "?")
        threads = data.get("cpu_threads") or data["provenance"].get("cpu_cores", "?")
        es = lang == "es"
        mode_words = {"train": "un paso de entrenamiento" if es else "a training step",
                      "inference": "inferencia" if es else "inference"}

        def places(test) -> list[str]:
            found = {}
            for mode, batch, units, value in rows:
                if test(value):
                    found.setdefault((mode, batch), []).append(str(units))
            unit = "unidades" if es else "units"
            return [f"{mode_words[m]}, {'lote' if es else 'batch'} {b}: {_join(u, lang)} {unit}"
                    for (m, b), u in sorted(found.items(),  # by batch, training first
                                            key=lambda kv: (kv[0][1], kv[0][0] != "train"))]
        cpu_faster = places(lambda v: v < 1 - LEVEL)
        level = places(lambda v: 1 - LEVEL <= v <= 1 + LEVEL)
        low, high = min(v for *_, v in rows), max(v for *_, v in rows)
        spread = (f"tiempo de CPU / tiempo de GPU de {ratio(low, lang)} a {ratio(high, lang)}"
                  if es else f"CPU time / GPU time from {ratio(low, lang)} to {ratio(high, lang)}")
        none = "en ningún tamaño" if es else "at no size"
        if es:
            return (f"En {who}, frente a su CPU ({cpu}, {threads} hilos), con una LSTM de "
                    f"{shape.replace('steps', 'pasos').replace('features', 'entradas')} (no se "
                    f"midió ninguna GRU): la CPU fue más rápida en "
                    f"{'; '.join(cpu_faster) if cpu_faster else none}"
                    + (f"; ninguna fue más rápida (a menos del 5 %) en {'; '.join(level)}"
                       if level else "")
                    + f"; la GPU, en todo lo demás ({spread}).")
        return (f"On {who}, against its own CPU ({cpu}, {threads} threads), on an LSTM of "
                f"{shape} (no GRU was timed): the CPU was faster in "
                f"{'; '.join(cpu_faster) if cpu_faster else none}"
                + (f"; neither was faster (within 5 %) in {'; '.join(level)}" if level else "")
                + f"; the GPU everywhere else ({spread}).")
    return _each(machines, rel, lang, ("torch",), say)


TF32_OFF = "torch.backends.cudnn.allow_tf32 = False"
SNIPPETS = Path(__file__).resolve().parents[2] / "snippets"


def program_text(rel: str) -> str:
    """The program as it is now: a current record ran exactly this text."""
    return (SNIPPETS / rel).read_text(encoding="utf-8")


def fact_stateful_torch(machines, lang):
    rel = "troubleshooting/keras_stateful_torch.py"

    def say(r, who):
        out = r.data["stdout"]
        failed = re.findall(r"^(GRU|LSTM) stateful, use_cudnn='auto' cuDNN: True\s+backward\(\): "
                            r"RuntimeError", out, re.M)
        fine = re.findall(r"^(GRU|LSTM) stateful, use_cudnn=False\s+cuDNN: False backward\(\): "
                          r"ok\s+fit\(\): ok", out, re.M)
        if not failed or not fine:
            _find("stateful, use_cudnn", "", rel)
        if lang == "es":
            return (f"En {who}, una capa con estado ({_join(failed, lang)}) en cuDNN falló en "
                    f"`backward()` y en `fit()` con el `RuntimeError` de arriba; con "
                    f"`use_cudnn=False` ({_join(fine, lang)}) ambos funcionaron.")
        return (f"On {who}, a stateful layer ({_join(failed, lang)}) on cuDNN failed in "
                f"`backward()` and in `fit()` with the `RuntimeError` above; with "
                f"`use_cudnn=False` ({_join(fine, lang)}) both worked.")
    return _each(machines, rel, lang, ("keras", "torch"), say)


def fact_one_cudnn_wheel(machines, lang):
    """PyTorch and JAX in one environment: which cuDNN wheel each GPU run had, and whether both
    frameworks ran cuDNN RNNs there (their kernel checks)."""
    torch_rel, jax_rel = "criteria/pytorch/on_gpu.py", "criteria/jax_backend/on_gpu.py"
    out = []
    for t in _current(machines, torch_rel):
        j = next((r for r in _current(machines, jax_rel) if r.slug == t.slug), None)
        if j is None:
            continue
        pkgs = t.data["provenance"].get("packages") or {}
        wheels = [f"`{k}` {v}" for k, v in sorted(pkgs.items()) if k.startswith("nvidia-cudnn")]
        torch_ok = "nn.LSTM(16, 32)                            aten::_cudnn_rnn: True" in \
            t.data["stdout"]
        jax_ok = bool(re.search(r"^LSTM\(32\):\s+\['cudnn_rnn", j.data["stdout"], re.M))
        who = machine_with_releases(t, ("torch", "jax"), lang)
        if lang == "es":
            ran = "las dos ejecutaron una LSTM en cuDNN" if torch_ok and jax_ok else \
                "no las dos ejecutaron una LSTM en cuDNN"
            out.append(f"En la GPU {who}, con una sola rueda de cuDNN ({_join(wheels, lang)}), {ran}.")
        else:
            ran = "both ran an LSTM on cuDNN" if torch_ok and jax_ok else \
                "not both ran an LSTM on cuDNN"
            out.append(f"On {who}, with one cuDNN wheel ({_join(wheels, lang)}), {ran}.")
    return " ".join(out) or W[lang]["none_yet"].format(
        what="`on_gpu.py`" if lang == "en" else "`on_gpu.py`")


# Frameworks of the speed-up benchmark, as its files name them, and what a reader calls them.
SPEEDUP_PROGRAMS = {"PyTorch": "benchmarks/cudnn_speedup_torch.py",
                    "Keras 3 (PyTorch)": "benchmarks/cudnn_speedup_keras_torch.py",
                    "Keras 3 (JAX)": "benchmarks/cudnn_speedup_keras_jax.py",
                    "Keras 3 (TensorFlow)": "benchmarks/cudnn_speedup_keras_tensorflow.py",
                    "tf-keras": "benchmarks/cudnn_speedup_tf_keras.py"}
FRAMEWORK_NAMES = {"es": {"Keras 3 (PyTorch)": "Keras 3 sobre PyTorch",
                          "Keras 3 (JAX)": "Keras 3 sobre JAX",
                          "Keras 3 (TensorFlow)": "Keras 3 sobre TensorFlow"},
                   "en": {"Keras 3 (PyTorch)": "Keras 3 on PyTorch",
                          "Keras 3 (JAX)": "Keras 3 on JAX",
                          "Keras 3 (TensorFlow)": "Keras 3 on TensorFlow"}}
MODES = {"en": {"train": "a training step", "inference": "inference"},
         "es": {"train": "un paso de entrenamiento", "inference": "la inferencia"}}


def speedups(record: records.Record) -> dict[tuple[str, str], list[float]]:
    """{(layer, mode): [each size's median speed-up]} of one framework's recorded sweep."""
    data = _data(record, "cudnn_speedup.json")
    out: dict[tuple[str, str], list[float]] = {}
    for c in data.get("grid") or []:
        if c.get("speedup"):
            out.setdefault((c["layer"], c["mode"]), []).append(c["speedup"]["median"])
    if not out:
        raise FactError(f"{record.snippet}: its recorded cudnn_speedup.json has no timed size")
    return out


def speedup_summary(machines, framework: str, lang: str) -> str:
    """Per GPU: for each layer and mode the framework timed, the median speed-up over its sizes,
    its range, and at how many sizes cuDNN was the slower path."""
    rel = SPEEDUP_PROGRAMS[framework]
    reader = FRAMEWORK_NAMES[lang].get(framework, framework)

    def say(r, who):
        parts = []
        for (layer, mode), values in speedups(r).items():
            med = conditions._spread(values)["median"]
            slower = sum(v < 1 for v in values)
            span = f"{ratio(min(values), lang)}–{ratio(max(values), lang)}"
            if lang == "es":
                part = (f"{layer}, {MODES[lang][mode]}: mediana {ratio(med, lang)} veces "
                        f"({span} en {len(values)} tamaños)")
                if slower:
                    part += f", cuDNN más lento en {slower} de ellos"
            else:
                part = (f"{layer}, {MODES[lang][mode]}: median {ratio(med, lang)}× "
                        f"({span} over {len(values)} sizes)")
                if slower:
                    part += f", cuDNN slower at {slower} of them"
            parts.append(part)
        if lang == "es":
            return f"Con {reader}, en {who}, la aceleración de cuDNN fue: " + "; ".join(parts) + "."
        return f"With {reader}, on {who}, cuDNN's speed-up was: " + "; ".join(parts) + "."
    frameworks = {"PyTorch": ("torch",), "Keras 3 (PyTorch)": ("keras", "torch"),
                  "Keras 3 (JAX)": ("keras", "jax"), "Keras 3 (TensorFlow)": ("keras", "tensorflow"),
                  "tf-keras": ("tf_keras", "tensorflow")}[framework]
    return _each(machines, rel, lang, frameworks, say)


def speedup_ranges_by_gpu(machines) -> list[tuple[str, dict[str, tuple[float, float]], list[str]]]:
    """Per GPU on record: its name, each framework's (lowest, highest) speed-up over every size,
    layer and mode it timed, and the frameworks it did not time."""
    out = []
    slugs = sorted({r.slug for rel in SPEEDUP_PROGRAMS.values() for r in _current(machines, rel)})
    for slug in slugs:
        ranges, missing, who = {}, [], None
        for framework, rel in SPEEDUP_PROGRAMS.items():
            rec = next((r for r in _current(machines, rel) if r.slug == slug), None)
            if rec is None:
                missing.append(framework)
                continue
            who = who or machine_name(rec)
            values = [v for vs in speedups(rec).values() for v in vs]
            ranges[framework] = (min(values), max(values))
        out.append((who, ranges, missing))
    return out


def range_words(ranges: dict[str, tuple[float, float]], lang: str) -> list[str]:
    """["PyTorch 1.3–9.4×", ...]: each framework's range, as a reader names the framework."""
    times = "×" if lang == "en" else " veces"
    return [f"{FRAMEWORK_NAMES[lang].get(f, f)} {ratio(lo, lang)}–{ratio(hi, lang)}{times}"
            for f, (lo, hi) in ranges.items()]


def speedup_ranges(machines, lang: str) -> str:
    """Per GPU, each framework's range of speed-ups over every size, layer and mode timed, and
    the frameworks it did not time."""
    out = []
    for who, ranges, missing in speedup_ranges_by_gpu(machines):
        names = [FRAMEWORK_NAMES[lang].get(f, f) for f in missing]
        if lang == "es":
            text = f"En la GPU {who}, la aceleración de cuDNN fue de {_join(range_words(ranges, lang), lang)}"
            text += f"; sin medir: {_join(names, lang)}." if missing else "."
        else:
            text = f"On {who}, cuDNN's speed-up was {_join(range_words(ranges, lang), lang)}"
            text += f"; not measured: {_join(names, lang)}." if missing else "."
        out.append(text)
    return " ".join(out) or W[lang]["none_yet"].format(
        what="`cudnn_speedup_*.py`")


def fact_gpus(machines, lang):
    """The GPUs the site's GPU figures come from, with their compute capability."""
    gpus = [m for m in machines if str(m.data["provenance"].get("machine", "")).startswith("GPU:")]
    if not gpus:
        return W[lang]["none_machine"]
    names = [f"{m.data['provenance']['machine'].removeprefix('GPU: ')} ("
             + ("capacidad de cómputo " if lang == "es" else "compute capability ")
             + f"{m.data['provenance'].get('gpu_compute_capability', '?')})" for m in gpus]
    if lang == "es":
        one = "una sola GPU" if len(gpus) == 1 else f"{len(gpus)} GPU"
        return f"Las cifras de GPU de este sitio vienen de {one}: {_join(names, lang)}."
    one = "one GPU" if len(gpus) == 1 else f"{len(gpus)} GPUs"
    return f"This site's GPU figures come from {one}: {_join(names, lang)}."


FACTS: dict[str, Callable[[list, str], str]] = {
    "tf32": fact_tf32,
    "determinism": fact_determinism,
    "cuda-graph": fact_cuda_graph,
    "longest-sequence": fact_longest_sequence,
    "packing-cost": fact_packing_cost,
    "cell-loop": fact_cell_loop,
    "crossover": fact_crossover,
    "stateful-torch": fact_stateful_torch,
    "one-cudnn-wheel": fact_one_cudnn_wheel,
    "gpus": fact_gpus,
    "speedup-ranges": speedup_ranges,
    **{f"speedup-{key}": (lambda fw: lambda m, lang: speedup_summary(m, fw, lang))(fw)
       for key, fw in (("torch", "PyTorch"), ("keras-torch", "Keras 3 (PyTorch)"),
                       ("keras-jax", "Keras 3 (JAX)"))},
}


def render(markdown: str, machines: list[records.Machine], lang: str, where: str,
           snippets_root: Path) -> tuple[str, list[str]]:
    """The page with its gpu-runs and gpu-fact markers replaced by their sentences, and the
    problems found (an unknown fact, a program that does not exist, a record that no longer
    reads as its fact expects)."""
    problems: list[str] = []

    def replace(m: re.Match) -> str:
        kind, arg = m.group(1), m.group(2)
        try:
            if kind == "runs":
                rels = arg.split()
                missing = [r for r in rels if not (Path(snippets_root) / r).is_file()]
                if missing:
                    raise FactError(f"no such program under snippets/: {', '.join(missing)}")
                return runs_sentence(machines, rels, lang, snippets_root)
            if arg not in FACTS:
                raise FactError(f"no fact {arg!r} (pipeline/claims/gpu_facts.py FACTS: "
                                f"{', '.join(sorted(FACTS))})")
            return FACTS[arg](machines, lang)
        except FactError as e:
            problems.append(f"{where}: <!-- gpu-{kind}: {arg} -->: {e}")
            return m.group(0)
    return MARKER.sub(replace, markdown), problems


# --- typed claims about GPU runs -----------------------------------------------------------------

# What only the records may say: that a GPU run of something is, or is not, on record.
TYPED = re.compile("|".join((
    r"\bno GPU (?:run|record|measurement)s?\b",
    r"\bnot (?:yet )?(?:been )?(?:run|measured|recorded|timed) on (?:a|the|any) GPU\b",
    r"\bnever (?:ran|run|been run) on a GPU\b",
    r"\bno (?:GPU )?(?:run|record) of (?:these|this|its|the) programs?\b",
    r"\bninguna (?:ejecución|medición)\b[^.\n]{0,60}\bGPU\b",
    r"\bno se (?:ha )?(?:ejecutado|ejecutó|medido|midió|registrado|registró)\b[^.\n]{0,20}"
    r"\ben (?:una|la|ninguna) GPU\b",
    r"\bsin (?:ninguna )?(?:ejecución|medición) en GPU\b",
)), re.I)


def check(markdown: str, where: str) -> list[str]:
    """One line per typed sentence that says whether a GPU ran something: the records say it
    (<!-- gpu-runs: ... -->), so that it never contradicts them."""
    problems = []
    for block in prose.blocks(markdown):
        text = prose.plain(block.text)
        for m in TYPED.finditer(text):
            line = block.line + text[:m.start()].count("\n")
            problems.append(f"{where}:{line}: {m.group(0)!r}: what a GPU ran or did not run is "
                            f"written from the records: use <!-- gpu-runs: PROGRAM ... --> "
                            f"(pipeline/claims/gpu_facts.py)")
    return problems
