"""Sentences about the GPU runs are written from the records (pipeline/claims/gpu_facts.py), and charts
draw one machine at a time (pipeline/pages/charts.py): checked on the records under results/, and on a
second, made-up GPU added beside them (a copy of the first machine's folder, renamed, with other
numbers: a fixture, never published), which must change the sentences and get charts of its own
with no page edit."""
from __future__ import annotations

import json
import re
import shutil
import statistics

import pytest

from conftest import REPO
from pipeline.claims import gpu_facts
from pipeline.pages import charts
from pipeline.records import store as records

RESULTS = REPO / "results"
SNIPPETS = REPO / "snippets"
SECOND = "GPU: Test Second Card"  # the fixture's machine


def _gpu_machines(machines):
    return [m for m in machines if m.data["provenance"]["machine"].startswith("GPU:")]


@pytest.fixture(scope="module")
def on_record():
    machines = records.load_all(RESULTS, SNIPPETS)
    if not _gpu_machines(machines):
        pytest.skip("no GPU record under results/")  # the facts then say so: tested below
    return machines


@pytest.fixture(scope="module")
def with_second_gpu(tmp_path_factory, on_record):
    """results/ with a second GPU beside the first: the first machine's folder copied, its
    machine renamed and every speed-up halved, its data files' hashes made again."""
    results = tmp_path_factory.mktemp("results")
    first = _gpu_machines(on_record)[0]
    shutil.copytree(RESULTS / first.slug, results / first.slug)
    copy = results / "test-second-card"
    shutil.copytree(RESULTS / first.slug, copy)
    info = json.loads((copy / "machine.json").read_text())
    info["provenance"].update(machine=SECOND, gpu_name="Test Second Card")
    (copy / "machine.json").write_text(json.dumps(info))
    for result in copy.rglob("result.json"):
        rec = json.loads(result.read_text())
        rec["provenance"].update(machine=SECOND, gpu_name="Test Second Card")
        for name in rec["data_files"]:
            path = result.parent / "data" / name
            data = json.loads(path.read_text())
            data["provenance"]["machine"] = SECOND
            for cell in data.get("grid") or []:
                if cell.get("speedup"):
                    cell["speedup"]["median"] /= 2
            path.write_text(json.dumps(data))
            rec["data_files"][name] = records._sha256(path.read_bytes())
        result.write_text(json.dumps(rec))
    return records.load_all(results, SNIPPETS)


def test_each_fact_is_written_from_its_record_in_both_languages(on_record):
    """The figures a sentence gives are the record's: read here from the record's own output
    and data, by this test's reading."""
    tf32 = records.for_snippet(on_record, "troubleshooting/tf32_precision.py")[0]
    default = re.search(r"^defaults +max \|error\|: LSTM (\S+) +GRU (\S+)", tf32.data["stdout"],
                        re.M)
    en, es = (gpu_facts.FACTS["tf32"](on_record, lang) for lang in ("en", "es"))
    assert f"{default.group(1)} (LSTM) and {default.group(2)} (GRU) with the defaults" in en
    assert default.group(1).replace(".", ",") in es and "la GPU" in es
    machine = tf32.data["provenance"]["machine"].removeprefix("GPU: ")
    torch = tf32.data["provenance"]["packages"]["torch"]
    for text in (en, es):
        assert machine in text and f"PyTorch {torch}" in text
        assert tf32.data["provenance"]["gpu_compute_capability"] in text
    problems = _unread_facts(on_record, gpu_facts.FACTS)
    assert not problems, "\n".join(problems)


def _unread_facts(machines, facts) -> list[str]:
    """The facts that do not read a record: each must differ from what it says with no record,
    name a GPU on record, and end as a sentence."""
    gpus = [m.data["provenance"]["machine"].removeprefix("GPU: ") for m in _gpu_machines(machines)]
    problems = []
    for name, fact in facts.items():
        for lang in ("en", "es"):
            text = fact(machines, lang)
            if text == fact([], lang):
                problems.append(f"{name} ({lang}) says no GPU ran it: {text}")
            elif not any(gpu in text for gpu in gpus):
                problems.append(f"{name} ({lang}) names no GPU: {text}")
            elif not text.endswith((".", ")")):
                problems.append(f"{name} ({lang}) is not a sentence: {text}")
    return problems


def test_a_fact_that_no_longer_reads_its_record_is_caught(on_record):
    """The break a review planted: every fact made to say that no GPU ran it."""
    planted = {name: (lambda machines, lang, fact=fact: fact([], lang))
               for name, fact in gpu_facts.FACTS.items()}
    caught = _unread_facts(on_record, planted)
    assert len(caught) == 2 * len(planted), caught


def test_a_speed_up_summary_is_the_median_over_the_sizes_its_record_timed(on_record):
    rec = records.for_snippet(on_record, "benchmarks/cudnn_speedup_keras_jax.py")[0]
    grid = json.loads((rec.data_dir / "cudnn_speedup.json").read_text())["grid"]
    infer = [c["speedup"]["median"] for c in grid if c["mode"] == "inference"]
    text = gpu_facts.FACTS["speedup-keras-jax"](on_record, "en")
    median = statistics.median(infer)
    assert (f"LSTM, inference: median {gpu_facts.ratio(median, 'en')}× "
            f"({gpu_facts.ratio(min(infer), 'en')}–{gpu_facts.ratio(max(infer), 'en')} over "
            f"{len(infer)} sizes), cuDNN slower at {sum(v < 1 for v in infer)} of them") in text


def test_without_records_every_sentence_says_that_no_gpu_ran_it():
    for name, fact in gpu_facts.FACTS.items():
        for lang, words in (("en", r"No GPU (run|is on record)"), ("es", r"Aún no hay")):
            assert re.search(words, fact([], lang)), (name, lang, fact([], lang))


def test_a_second_gpu_changes_the_sentences_and_gets_its_own_charts(on_record, with_second_gpu):
    first = _gpu_machines(on_record)[0].data["provenance"]["machine"].removeprefix("GPU: ")
    for lang in ("en", "es"):
        before = gpu_facts.FACTS["speedup-torch"](on_record, lang)
        after = gpu_facts.FACTS["speedup-torch"](with_second_gpu, lang)
        assert first in after and "Test Second Card" in after and "Test Second Card" not in before
        runs = gpu_facts.runs_sentence(with_second_gpu, ["c/lstm_v8.c", "c/lstm_train.c"], lang,
                                       SNIPPETS)
        assert runs.count(first) == 1 and runs.count("Test Second Card") == 1
        assert "Test Second Card" in gpu_facts.FACTS["gpus"](with_second_gpu, lang)
    # halved speed-ups: the second card's median is half the first's, in its own sentence
    rec = records.for_snippet(on_record, "benchmarks/cudnn_speedup_torch.py")[0]
    grid = json.loads((rec.data_dir / "cudnn_speedup.json").read_text())["grid"]
    train = statistics.median(c["speedup"]["median"] for c in grid
                              if c["layer"] == "LSTM" and c["mode"] == "train")
    second = gpu_facts.FACTS["speedup-torch"](with_second_gpu, "en").split("With PyTorch, on ")[2]
    assert second.startswith("Test Second Card")
    assert f"LSTM, a training step: median {gpu_facts.ratio(train / 2, 'en')}×" in second
    # its charts: one per machine, each titled and labelled with its own
    recorded = [(p, w) for p, w in records.data_files(with_second_gpu, "cudnn_speedup.json")]
    titles = [re.search(r"<title>(.*?)</title>", svg).group(1) for svg, _ in
              charts.figures("cudnn_speedup", [], recorded, REPO / ".cache" / "charts")]
    assert len(titles) == 2 and sum(SECOND in t for t in titles) == 1
    assert sum(first in t for t in titles) == 1


# The sections that answer what readers ask of a GPU run (tests/site/test_search.py, GPU_QUESTIONS).
ANSWERS = ["troubleshooting/numbers/#pytorch-tf32", "troubleshooting/numbers/#pytorch-reproducible",
           "troubleshooting/numbers/#pytorch-cuda-graph",
           "troubleshooting/runtime/#pytorch-long-bidirectional", "benchmarks/#packed-sequences",
           "benchmarks/#jax-cudnn-lstm", "troubleshooting/keras/#keras-stateful-torch"]


def test_each_gpu_answer_states_the_runs_figures_in_its_prose_in_both_languages(site, on_record):
    """Not only in an English output box: the section's paragraphs name the GPU that ran it, in
    each language, with a figure of its run."""
    from bs4 import BeautifulSoup
    gpus = {m.data["provenance"]["machine"].removeprefix("GPU: ")
            for m in _gpu_machines(on_record)}
    for lang in ("", "es"):
        for answer in ANSWERS:
            page, _, anchor = answer.partition("#")
            soup = BeautifulSoup((site / lang / page / "index.html").read_text(encoding="utf-8"),
                                 "html.parser")
            heading = soup.find(id=anchor)
            prose = []
            for el in heading.find_all_next(["h2", "h3", "h4", "p", "li"]):
                if el.name[0] == "h" and el.name <= heading.name:
                    break
                if el.name in ("p", "li") and not el.find_parent("pre"):
                    prose.append(el.get_text(" "))
            text = " ".join(prose)
            assert any(g in text for g in gpus), (lang, answer)
            assert re.search(r"\d[.,]\d", text), (lang, answer)  # a figure of the run


def test_the_crossover_names_each_size_where_the_cpu_was_faster(on_record):
    """Read here from the record's data: every (mode, batch, units) whose CPU time / GPU time
    was under 0.95 is named as the CPU's, and the sentence says the run timed an LSTM only."""
    rec = records.for_snippet(on_record, "benchmarks/cpu_gpu_crossover.py")[0]
    data = json.loads((rec.data_dir / "cpu_gpu_crossover.json").read_text())
    rows = data["results"]
    text = gpu_facts.FACTS["crossover"](on_record, "en")
    said = text.split("the CPU was faster in ", 1)[1].split("; neither", 1)[0]
    for row in rows:
        units = f"{row['x']}"
        where = f"batch {row['batch']}:"
        part = next((p for p in said.split("; ") if (row["mode"] == "train") == p.startswith(
            "a training step") and where in p), "")
        assert (row["median"] < 0.95) == bool(re.search(rf"\b{units}\b", part.split(":")[-1])), \
            (row["mode"], row["batch"], row["x"], row["median"], text)
    assert "no GRU was timed" in text and data["provenance"]["cpu_model"] in text
