"""Every entry of data/messages.yml, the messages pages quote as a library's own text: on a page
in both languages, and backed by what it claims, judged here without the build's own code (the
build checks the same with pipeline/claims/messages.py; see tests/claims/test_claims.py for plants)."""
from __future__ import annotations

import importlib.util
import json
import re
import types
from pathlib import Path

import pytest
import yaml

from conftest import REPO

REGISTRY = yaml.safe_load((REPO / "data" / "messages.yml").read_text(encoding="utf-8"))
DOCS = REPO / "docs"
MARKER = re.compile(r"<!-- message(?:-releases)?: ([\w-]+) -->")


def pages(lang: str) -> dict[str, str]:
    suffix = ".es.md" if lang == "es" else ".md"
    return {str(p.relative_to(DOCS)): p.read_text(encoding="utf-8")
            for p in sorted(DOCS.rglob(f"*{suffix}"))
            if lang == "es" or not p.name.endswith(".es.md")}


def _words(text: str) -> str:
    return " ".join(re.sub(r"[`*\[\]]", "", text).split())


@pytest.mark.parametrize("lang", ["en", "es"])
def test_every_message_is_shown_on_a_page(lang):
    """By its marker, or quoted in a sentence (the words of its text, whitespace aside)."""
    text = "\n".join(pages(lang).values())
    shown = set(MARKER.findall(text))
    # quotations, paragraph by paragraph, with code spans (which hold quotes of their own) out
    paragraphs = [re.sub(r"`[^`\n]*`", lambda m: m.group(0).strip("`").replace('"', "'"), p)
                  for p in re.split(r"\n\s*\n", text)]
    quotes = [_words(q) for p in paragraphs for q in re.findall(r'"([^"]+)"', p)]
    quoted = {mid for mid, e in REGISTRY.items()
              if any(len(q.split()) >= 4 and q.strip(" .") in _words(e["text"]) for q in quotes)}
    assert set(REGISTRY) == shown | quoted, set(REGISTRY) - shown - quoted


def _package(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec.origin and spec.origin.endswith("__init__.py"):
        return Path(spec.origin).parent
    return Path(list(spec.submodule_search_locations)[0])


def _constants(code: types.CodeType):
    """Every string constant of compiled code, nested functions and classes included."""
    for c in code.co_consts:
        if isinstance(c, str):
            yield c
        elif isinstance(c, types.CodeType):
            yield from _constants(c)


IN_LIBRARY = sorted(mid for mid, e in REGISTRY.items() if "in" in e)


@pytest.mark.parametrize("mid", IN_LIBRARY)
def test_each_library_message_is_in_the_installed_files(mid):
    """The compiled module's constants for Python files (f-strings split at their {}), the raw
    bytes for any other file. An f-string's constant parts are separate constants, so each part
    must be inside one of them."""
    entry = REGISTRY[mid]
    folder = _package(entry["in"]["package"])
    files = [p for pattern in entry["in"]["files"] for p in folder.glob(pattern)]
    assert files, (mid, entry["in"])
    parts = entry.get("parts") or [entry["text"]]
    assert all(p in entry["text"] for p in parts), mid
    for part in parts:
        def holds(path: Path) -> bool:
            if path.suffix == ".py":
                code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
                return any(part.strip() in c for c in _constants(code))
            return part.strip().encode() in path.read_bytes()
        assert any(holds(p) for p in files), (mid, part)


QUOTED = sorted(mid for mid, e in REGISTRY.items() if "quoted" in e)


@pytest.mark.parametrize("mid", QUOTED)
def test_each_thread_only_message_names_its_release_and_is_linked(mid):
    """Seen only in a thread: the entry names the release it was seen with, and every page that
    shows it links the thread."""
    quoted = REGISTRY[mid]["quoted"]
    assert re.search(r"\d+\.\d+", quoted["release"]), (mid, "no release number")
    for lang in ("en", "es"):
        for name, text in pages(lang).items():
            if f"<!-- message: {mid} -->" in text:
                assert quoted["url"] in text, (name, mid)


def _printed_by_release(backend: str, case: str, pieces: list[str]) -> tuple[list[str], list[str]]:
    """The releases, and the keras-nightly dates, whose record of the version matrix holds every
    piece of the text, read directly from results/versions/*/ (each cell's machine.json says
    which release or nightly it ran; PyTorch's cells are torch-<release>)."""
    found, nightly = [], []
    cells = "torch-*" if backend == "pytorch" else "keras-*"
    for cell in sorted((REPO / "results" / "versions").glob(cells)):
        facts = json.loads((cell / "machine.json").read_text(encoding="utf-8"))["cell"]
        if backend != "pytorch" and facts.get("backend") != backend:
            continue
        for rules in cell.rglob("rules.json"):
            case_result = json.loads(rules.read_text(encoding="utf-8"))["cases"].get(case, {})
            said = json.dumps(case_result, ensure_ascii=False)
            if all(piece in said for piece in pieces):
                if facts.get("nightly"):
                    nightly.append(facts["nightly"])
                else:
                    found.append(facts["version"].split("+")[0])
    return found, nightly


@pytest.mark.parametrize("mid", sorted(mid for mid, e in REGISTRY.items() if "record" in e))
def test_each_record_message_names_the_releases_that_printed_it(mid):
    from pipeline.claims import messages, version_claims
    entry = REGISTRY[mid]
    printed, nightly = _printed_by_release(entry["record"]["backend"], entry["record"]["case"],
                                           entry.get("parts") or [entry["text"]])
    assert printed or nightly, mid
    runs = version_claims.load(REPO / "results" / "versions", REPO / "snippets")
    msg = messages.load(REPO / "data" / "messages.yml")[mid]
    shown = messages.release_text(msg, runs, "en")
    # Keras releases by their minor, as the versions table names them; PyTorch's whole
    minor = (lambda v: v) if entry["record"]["backend"] == "pytorch" \
        else (lambda v: ".".join(v.split(".")[:2]))
    minors = sorted({minor(v) for v in printed}, key=lambda v: tuple(map(int, v.split("."))))
    # "3.10 to 3.13": the first and last minor printed; one minor alone is named alone; a
    # nightly by its date, after them, never as a release
    expected = [minors[0] if len(minors) == 1 else f"{minors[0]} to {minors[-1]}"] if minors \
        else []
    expected += [", ".join(f"the keras-nightly of {d}" for d in sorted(set(nightly)))] \
        if nightly else []
    assert shown.replace("*", "") == " and ".join(expected), (mid, shown, printed, nightly)
    if nightly and not printed:
        assert messages.title(msg, "en", runs).startswith(f"Printed by {expected[0]} on "), mid


# How a message box's title begins, by the page's language: where the text comes from.
SOURCE_TITLES = {"en": ("In ", "Printed by ", "Quoted from "),
                 "es": ("En ", "Impreso por ", "Citado de ")}
BOX_MARKER = re.compile(r"<!--\s*message:\s*[\w-]+\s*-->")  # one box each


def test_built_pages_show_where_each_message_comes_from(site):
    """Each message box, on every built page (collapsed blocks opened), is titled with its
    source in the page's language; there are at least as many boxes as the pages' sources ask
    for."""
    from bs4 import BeautifulSoup
    from built_pages import opened
    problems, boxes = [], {"en": 0, "es": 0}
    for page in sorted(site.rglob("index.html")):
        lang = "es" if page.relative_to(site).parts[0] == "es" else "en"
        for box in BeautifulSoup(opened(page), "html.parser").select("div.message"):
            boxes[lang] += 1
            title = box.select_one("span.filename")
            text = title.get_text() if title else ""
            if not text.startswith(SOURCE_TITLES[lang]):
                problems.append(f"{page.relative_to(site)}: a message box titled {text!r}: "
                                f"{box.get_text()[:60]!r}")
    for lang, suffix in (("en", ".md"), ("es", ".es.md")):
        asked = sum(len(BOX_MARKER.findall(p.read_text(encoding="utf-8")))
                    for p in (REPO / "docs").rglob(f"*{suffix}")
                    if lang == "es" or not p.name.endswith(".es.md"))
        if boxes[lang] < asked:
            problems.append(f"{lang}: {boxes[lang]} message boxes built, {asked} asked for")
    assert not problems, "\n".join(problems[:20])
    from importlib.metadata import version  # the release a box names is the one installed
    assert f"In TensorFlow {version('tensorflow')}, installed here" in "".join(
        opened(p) for p in (site / "troubleshooting").glob("*/index.html"))
    assert f"En TensorFlow {version('tensorflow')}, instalado aquí" in "".join(
        opened(p) for p in (site / "es" / "troubleshooting").glob("*/index.html"))
