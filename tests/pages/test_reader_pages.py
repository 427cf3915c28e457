"""What a reader sees on the built pages: no talk of how the site is built, outputs without
library start-up chatter, results before method on the benchmarks page, charts in the page's
language with their data as a table, and the whole C LSTM program with a build line that works.

Reads the session's `site` build (tests/conftest.py); the C check compiles with gcc.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import yaml

from built_pages import deferred, opened, served
from conftest import REPO

BUILD_PAGE = "how-this-site-is-built"

# How the site is built belongs on "How this site is built" (and CONTRIBUTING), not on a reader
# page. English and Spanish; the site's own make targets are read from its Makefile.
BUILD_WORDS = [re.compile(p, re.I) for p in (
    # the notes the guide started from ("seed 001"), not a random seed (seed=0 in code)
    r"\bseeds? 0\d\d\b", r"\bseed errors\b", r"\bthe seeds\b", r"\bnotes? this guide started",
    r"results/", r"BENCH_SCALE", r"\bthe build\b", r"\bthis build\b", r"site's build",
    r"\bbuild machine\b", r"with it the build",
    r"\besta compilación\b", r"\bla compilación del sitio\b", r"\besta construcción\b",
    r"\bconstrucción (?:del|de este) sitio\b", r"\bcada construcción\b", r"\bconstruye este sitio\b",
)]
MAKE_TARGETS = sorted(set(re.findall(r"^([a-z][\w-]*):", (REPO / "Makefile").read_text(), re.M)))
BUILD_WORDS.append(re.compile(r"\bmake (?:%s)\b" % "|".join(map(re.escape, MAKE_TARGETS))))

ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)


def article_text(page: Path) -> str:
    """The text a reader reads on a page: its article (not the navigation), every collapsed
    block opened (tests/built_pages.py), tags removed, the charts' SVG text included."""
    found = ARTICLE.search(opened(page))
    assert found, f"{page}: no <article>"
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found.group(1))))


def reader_pages(site: Path) -> list[Path]:
    pages = [p for p in site.rglob("index.html")
             if BUILD_PAGE not in p.parts and "search" not in p.parts
             and p.parent.name != "assets"]
    assert len(pages) >= 20, pages
    return sorted(pages)


def test_the_build_words_are_known_to_the_check():
    """The check itself: it finds the phrases readers met before they were removed."""
    for phrase in ("One of the notes this guide started from (seed 001)", "the seed errors snippet",
                   "committed under `results/`", "make gpu-run", "`BENCH_SCALE=1`",
                   "The snippet fails, and with it the build", "Esta compilación imprimió:",
                   "la construcción de este sitio"):
        assert any(p.search(phrase) for p in BUILD_WORDS), phrase
    assert "gpu-run" in MAKE_TARGETS and "serve" in MAKE_TARGETS
    for fine in ("keras.utils.set_random_seed(0)", "make -C snippets/c", "TF built with CUDA",
                 "a CUDA build of TensorFlow", "snippets/criteria/tf_backend/seed_errors.py"):
        assert not any(p.search(fine) for p in BUILD_WORDS), fine


def test_no_reader_page_talks_about_how_the_site_is_built(site):
    problems = []
    for page in reader_pages(site):
        text = article_text(page)
        for p in BUILD_WORDS:
            for m in p.finditer(text):
                problems.append(f"{page.relative_to(site)}: {p.pattern!r}: "
                                f"…{text[max(0, m.start() - 60):m.end() + 40]}…")
    assert not problems, "\n".join(problems[:30])
    # ... and the page that explains the build still says it.
    built = article_text(site / BUILD_PAGE / "index.html")
    assert "make gpu-run" in built and "results/" in built


# A path in the repository, as a reader does not save a file: the runner saves a program under its
# file's name alone ("masking.py", not "snippets/criteria/tf_backend/masking.py").
REPO_PATH = re.compile(r"\bsnippets/")
PROGRAM_FILE = re.compile(r'data-copy-src="([^"]+)"')


def test_no_reader_page_names_a_path_under_snippets(site):
    """What a reader reads names files as the reader saves them: code titles, collapsed blocks'
    titles, prose, message titles, code and outputs (every collapsed block opened), and the
    programs the copy buttons copy. A link's address is not read: it may point into the
    repository."""
    problems = []
    for page in reader_pages(site):
        text = article_text(page)
        for m in REPO_PATH.finditer(text):
            problems.append(f"{page.relative_to(site)}: …{text[max(0, m.start() - 60):m.end() + 40]}…")
        for address in set(PROGRAM_FILE.findall(page.read_text(encoding="utf-8"))):
            program = served(page, address).read_text(encoding="utf-8")
            if REPO_PATH.search(program):
                problems.append(f"{page.relative_to(site)}: the program {address} names snippets/")
    assert not problems, "\n".join(problems[:30])
    # the code titles that named their repository path now name the file alone
    criteria = (site / "criteria" / "index.html").read_text(encoding="utf-8")
    assert '<span class="filename">masking.py</span>' in criteria
    fixing = (site / "es" / "fixing" / "index.html").read_text(encoding="utf-8")
    assert '<summary>El comprobador completo (cudnn_check.py)</summary>' in fixing


def test_how_this_site_is_built_comes_last_in_the_navigation():
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
                         .split("\n\n", 1)[0].replace("\n  - ", "\n- "))
    assert list(nav[-1].values()) == [f"{BUILD_PAGE}.md"], nav


# --- outputs without start-up chatter ----------------------------------------------------------

STARTUP = re.compile(r"absl::InitializeLog|oneDNN custom operations|cpu_feature_guard|"
                     r"Unable to register cu\w+ factory|failed call to cuInit|"
                     r"^[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ \S+:\d+\]", re.M)


def test_outputs_carry_no_library_start_up_lines(site):
    """Outputs (a snippet's, a record's, a notebook cell's) carry none; a page may still quote
    such a line where it explains it (troubleshooting's "Unable to register cuDNN factory")."""
    from bs4 import BeautifulSoup
    problems, outputs, boxes = [], 0, 0
    for page in sorted(site.rglob("index.html")):
        text = opened(page)  # outputs in collapsed blocks too
        boxes += len(re.findall(r'<div class="(?:[^"]*\s)?output(?:\s[^"]*)?"', text))
        soup = BeautifulSoup(text, "html.parser")
        for pre in soup.select("div.output pre, .jp-OutputArea-output pre"):
            outputs += 1
            text = pre.get_text()
            for m in STARTUP.finditer(text):
                problems.append(f"{page.relative_to(site)}: {text[m.start():m.start() + 90]!r}")
    assert outputs > 100 and outputs >= boxes, \
        f"{outputs} outputs read of {boxes} output boxes: the selector no longer matches"
    assert not problems, "\n".join(problems[:20])
    # The lines are gone from the page, not from the runs: what the snippets printed is kept.
    kept = [json.loads(p.read_text()) for p in (REPO / ".cache" / "runs").glob("*/result.json")]
    assert any(STARTUP.search(r.get("stdout", "") + r.get("stderr", "")) for r in kept)
    notebook = (site / "notebooks" / "rnn-lstm" / "index.html").read_text(encoding="utf-8")
    assert "GPUs visible:" in notebook  # the first cell's own output is still there


# --- what ran, and where, in the reader's words -------------------------------------------------

# The build's words for what the reader sees as a program and its run (English and Spanish).
RUN_WORDS = re.compile(r"(?<![/\w.-])(?:snippets?|fragmentos?)(?![/\w.-])|GPU pretended|"
                       r"pretended GPU|GPU simulada|simulando una GPU", re.I)
PRE = re.compile(r"<pre\b.*?</pre>|<span class=\"filename\">.*?</span>", re.S)


def prose(page: Path) -> str:
    """The article without its code and outputs (what programs print is theirs, and a block's
    title names its file), every collapsed block opened."""
    found = ARTICLE.search(opened(page))
    text = re.sub(r"<[^>]+>", " ", PRE.sub(" ", found.group(1)))
    return html.unescape(re.sub(r"\s+", " ", text))


def test_the_check_knows_the_words_readers_met():
    for phrase in ("The snippet trains on both paddings with a GPU pretended",
                   "Este fragmento traza", "simulando una GPU ([cómo]"):
        assert RUN_WORDS.search(phrase), phrase
    for fine in ("snippets/criteria/tf_backend/masking.py", "run here on a CPU, with Keras told a "
                 "GPU is present", "the C version program"):
        assert not RUN_WORDS.search(fine), fine


def test_reader_pages_say_what_ran_and_where_in_reader_words(site):
    """No "snippet" or "GPU pretended" in a reader page's prose; an output's title says where it
    ran ("run here on a CPU, with Keras told a GPU is present"); a program that needs a GPU gets
    one line, not a box that repeats what it printed."""
    problems = []
    for page in reader_pages(site):
        text = prose(page)
        for m in RUN_WORDS.finditer(text):
            near = text[max(0, m.start() - 60):m.end() + 30]
            problems.append(f"{page.relative_to(site)}: …{near}…")
        raw = page.read_text(encoding="utf-8")
        if re.search(r'class="admonition-title">(Needs a GPU|Necesita una GPU)', raw):
            problems.append(f"{page.relative_to(site)}: a box of what a GPU-only program printed")
    assert not problems, "\n".join(problems[:30])
    criteria = (site / "criteria" / "index.html").read_text(encoding="utf-8")
    assert "Output · run here on a CPU, with Keras told a GPU is present · " in criteria
    assert '<p class="needs-gpu"><strong>Needs a GPU.</strong>' in criteria
    es = (site / "es" / "criteria" / "index.html").read_text(encoding="utf-8")
    assert "Salida · ejecutado aquí en una CPU, diciéndole a Keras que hay una GPU · " in es


def test_measured_links_only_to_a_measurement():
    """A link that says "measured" must lead to a measurement on record: the warning and home
    pages say how much slower the generic kernel is through <!-- speedup-link -->, which links
    to this site's GPU numbers only when a GPU run is on record."""
    for page in (REPO / "docs").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        for label, target in re.findall(r"\[([^\]]*)\]\(([^)]*)\)", text):
            if re.search(r"\b(measured|medid[oa]s?)\b", label, re.I):
                assert False, f"{page.name}: [{label}]({target}) is typed by hand"
    for name in ("warning.md", "warning.es.md", "index.md", "index.es.md"):
        assert "<!-- speedup-link -->" in (REPO / "docs" / name).read_text(encoding="utf-8")


# --- the benchmarks page ------------------------------------------------------------------------


def first_h2(page: str) -> str:
    article = ARTICLE.search(page).group(1)
    found = re.search(r"<h2[^>]*>(.*?)</h2>", article, re.S).group(1)
    return re.sub(r"<a class=\"headerlink\".*?</a>|<[^>]+>", "", found).strip()


def test_benchmarks_and_fixing_open_with_their_answer_and_the_run_times_are_on_the_build_page(
        site):
    """Benchmarks: how much faster cuDNN is, its chart before the first list of how it is
    measured; Fixing: the change to make, before the checker's machinery."""
    for lang, answer, fix, build_times in (
            ("", "How much faster is cuDNN?", "The smallest change for each cause",
             "Finished (UTC)"),
            ("es", "cuDNN frente al kernel genérico", "El cambio más pequeño para cada causa",
             "Terminado (UTC)")):
        base = site / lang if lang else site
        page = (base / "benchmarks" / "index.html").read_text(encoding="utf-8")
        assert first_h2(page).startswith(answer), first_h2(page)
        article = ARTICLE.search(page).group(1)
        assert article.index('class="benchmark-chart') < article.index("<ul>")
        assert build_times not in page
        assert build_times in (base / BUILD_PAGE / "index.html").read_text(encoding="utf-8")
        fixing = (base / "fixing" / "index.html").read_text(encoding="utf-8")
        assert first_h2(fixing) == fix, first_h2(fixing)
    for page in site.rglob("index.html"):
        text = page.read_text(encoding="utf-8")
        assert "Drawn at build time" not in text and "Dibujado al construir" not in text, page


# --- charts in the page's language --------------------------------------------------------------

ENGLISH_CHART_WORDS = re.compile(r"\b(Measured on|median|variant|per call|train step|steps|units|"
                                 r"batch|relative to|this page's run|lower is better)\b")


def charts_of(page: Path) -> list[tuple[str, str, str]]:
    """(benchmark, SVG, data table) of each drawn chart on a page, once loaded."""
    text = opened(page)
    return re.findall(r'<figure class="benchmark-chart" data-benchmark="([\w.-]+)">.*?'
                      r"(<svg.*?</svg>).*?(<details class=\"chart-data\">.*?</details>)</figure>",
                      text, re.S)


def test_spanish_pages_draw_their_charts_in_spanish_with_a_data_table(site):
    checked = 0
    for en_page in sorted(site.rglob("index.html")):
        if en_page.relative_to(site).parts[0] == "es":
            continue
        es_page = site / "es" / en_page.relative_to(site)
        en_charts, es_charts = charts_of(en_page), charts_of(es_page)
        assert [c[0] for c in en_charts] == [c[0] for c in es_charts], en_page
        for (name, en_svg, en_table), (_, es_svg, es_table) in zip(en_charts, es_charts):
            where = f"{es_page.relative_to(site)} chart {name}"
            words = html.unescape(re.sub(r"<[^>]+>", " ", es_svg))
            leftover = ENGLISH_CHART_WORDS.findall(words)
            assert not leftover, f"{where}: English in the Spanish chart: {leftover}"
            assert "Medido en" in words and "mediana" in words, where
            en_title = re.search(r"<title>(.*?)</title>", en_svg).group(1)
            es_title = re.search(r"<title>(.*?)</title>", es_svg).group(1)
            assert en_title != es_title, where
            # The same rows in both tables, the numbers with the language's decimal mark.
            en_rows = re.findall(r"<tr><td>.*?</tr>", en_table)
            es_rows = re.findall(r"<tr><td>.*?</tr>", es_table)
            assert en_rows and len(en_rows) == len(es_rows), where
            assert "<summary>Los datos en una tabla</summary>" in es_table, where
            en_nums = [re.findall(r"\d+(?:\.\d+)?", r) for r in en_rows]
            es_nums = [[n.replace(",", ".") for n in re.findall(r"\d+(?:,\d+)?", r)]
                       for r in es_rows]
            assert [n[-3:] for n in en_nums] == [n[-3:] for n in es_nums], where
            checked += 1
    assert checked >= 10, checked


def test_no_chart_holds_two_machines_and_no_two_charts_share_a_title(site):
    """A chart draws one machine's run: its note names one machine ("Measured on"), its data
    table has no machine column, and its title names that machine, so two runs (of two
    machines, or of one machine at two sets of sizes) never share a title on a page."""
    checked = 0
    for page in sorted(site.rglob("index.html")):
        drawn = charts_of(page)
        titles = []
        for name, svg, table in drawn:
            where = f"{page.relative_to(site)} chart {name}"
            text = html.unescape(re.sub(r"<[^>]+>", " ", svg))
            machines = re.findall(r"(?:Measured on|Medido en) ((?:CPU|GPU): .+?) \((?:this page's "
                                  r"run|ejecución de esta página|\d{4}-\d\d-\d\d)", text)
            assert len(machines) == 1, f"{where}: {len(machines)} machines: {machines}"
            title = html.unescape(re.search(r"<title>(.*?)</title>", svg, re.S).group(1))
            assert machines[0].strip() in title, f"{where}: its title does not name {machines}"
            assert "<th>Machine</th>" not in table and "<th>Máquina</th>" not in table, where
            titles.append(title)
            checked += 1
        shared = {t for t in titles if titles.count(t) > 1}
        assert not shared, f"{page.relative_to(site)}: charts share a title: {shared}"
    assert checked >= 20, checked




# --- troubleshooting, pages by kind ---------------------------------------------------------------

def test_every_address_of_the_old_troubleshooting_page_reaches_its_answer(site):
    """/troubleshooting/#anchor, the one page there was until the pages by kind: each old anchor
    is an element of the index page whose link leads to a page that has that anchor, and the
    index's script sends the reader to the same address (tests/site/test_pages.py runs it)."""
    from bs4 import BeautifulSoup
    data = yaml.safe_load((REPO / "data" / "troubleshooting.yml").read_text(encoding="utf-8"))
    renamed = data.get("renamed") or {}
    olds = list(data["old_anchors"]) + list(renamed)
    assert len(olds) >= 50
    for lang in ("", "es"):
        folder = (site / lang / "troubleshooting") if lang else site / "troubleshooting"
        text = (folder / "index.html").read_text(encoding="utf-8")
        soup = BeautifulSoup(text, "html.parser")
        sent = json.loads(re.search(r"var m=(\{.*?\});", text).group(1))
        assert set(sent) == set(olds), lang
        ids: dict[str, set[str]] = {}
        for old in olds:
            held = soup.find(id=old)
            assert held is not None, (lang, old)
            link = held.find_parent("li").find("a")["href"]
            assert link == sent[old], (lang, old, link, sent[old])
            page, _, anchor = link.partition("#")
            assert anchor == renamed.get(old, old), (lang, old, link)
            if page not in ids:  # each page parsed once, not once an anchor
                ids[page] = {el["id"] for el in BeautifulSoup(
                    (folder / page / "index.html").read_text(encoding="utf-8"),
                    "html.parser").find_all(id=True)}
            assert anchor in ids[page], (lang, old, link)


# --- what a page weighs -------------------------------------------------------------------------

MAX_PAGE_BYTES = 250_000
STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)"')


def test_no_reader_page_carries_what_it_loads_when_the_reader_gets_to_it(site):
    """A reader page's HTML stays under 250 KB: programs to
    copy, code of collapsed blocks and charts are files of the site the page loads when the
    reader gets to them (tests/built_pages.py), a notebook's stylesheets are files too, and
    every file a page names is there."""
    problems, biggest = [], (0, "")
    pages = [p for p in site.rglob("index.html") if "search" not in p.parts
             and p.parent.name != "assets"]
    assert len(pages) >= 24, len(pages)
    for page in pages:
        size = page.stat().st_size
        biggest = max(biggest, (size, str(page.relative_to(site))))
        if size > MAX_PAGE_BYTES:
            problems.append(f"{page.relative_to(site)}: {size} bytes, over {MAX_PAGE_BYTES}")
        missing = [f for f in deferred(page) if not f.is_file()]
        text = page.read_text(encoding="utf-8")
        missing += [served(page, a) for a in PROGRAM_FILE.findall(text) + STYLESHEET.findall(text)
                    if not served(page, a).is_file()]
        problems += [f"{page.relative_to(site)}: names {f}, not in the site" for f in missing]
    assert not problems, "\n".join(problems)
    print(f"heaviest reader page: {biggest[1]}, {biggest[0]} bytes")


def test_headings_never_skip_a_level(site):
    """Each heading of a page's article is at most one level below the one before it (an h4 right
    after an h2 leaves a screen reader's outline with a gap; Lighthouse's heading-order audit),
    on every page, the build page included."""
    problems = []
    for page in sorted(p for p in site.rglob("index.html") if "assets" not in p.parts):
        found = ARTICLE.search(page.read_text(encoding="utf-8"))
        assert found, f"{page}: no <article>"
        headings = re.findall(r"<h([1-6])\b([^>]*)>", found.group(1))
        for (before, _), (level, attributes) in zip(headings, headings[1:]):
            if int(level) > int(before) + 1:
                anchor = re.search(r'\bid="([^"]*)"', attributes)
                problems.append(f"{page.relative_to(site)}: h{level} "
                                f"#{anchor.group(1) if anchor else '?'} right after an h{before}")
    assert not problems, "\n".join(problems)
