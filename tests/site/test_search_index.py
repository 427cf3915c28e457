"""pipeline/pages/hooks/search_index.py: one search index per language, next to the combined one."""
from __future__ import annotations

import json
import re

from conftest import REPO, module_from

hook = module_from(REPO / "pipeline" / "pages" / "hooks" / "search_index.py")

PREFIXES = {"en": "", "es": "es/"}


def test_a_document_belongs_to_the_language_of_its_longest_prefix():
    assert hook.language_of("es/criteria/#keras-3", PREFIXES) == "es"
    assert hook.language_of("criteria/", PREFIXES) == "en"
    assert hook.language_of("", PREFIXES) == "en"
    assert hook.language_of("escape/", PREFIXES) == "en"  # a folder name, not the "es/" prefix


def test_split_keeps_the_config_and_each_document_once():
    index = {"config": {"lang": ["en", "es"]},
             "docs": [{"location": "", "title": "Home"}, {"location": "es/", "title": "Inicio"},
                      {"location": "es/x/#a", "title": "A"}, {"location": "x/", "title": "X"}]}
    parts = hook.split(index, PREFIXES)
    assert [d["title"] for d in parts["en"]["docs"]] == ["Home", "X"]
    assert [d["title"] for d in parts["es"]["docs"]] == ["Inicio", "A"]
    assert parts["en"]["config"] == parts["es"]["config"] == index["config"]


def test_the_built_site_has_an_index_per_language_that_its_pages_ask_for(site):
    text = (site / "search" / "search_index.json").read_text(encoding="utf-8")
    combined = json.loads(text)
    seen = []
    for language in PREFIXES:
        part_text = (site / "search" / f"search_index.{language}.json").read_text(encoding="utf-8")
        # how-this-site-is-built says a language's index is half of what both weigh together
        assert len(part_text.encode()) < 0.6 * len(text.encode()), language
        part = json.loads(part_text)
        assert part["config"] == combined["config"]
        assert part["docs"], f"no {language} document in its index"
        assert all((d["location"].startswith("es/")) == (language == "es") for d in part["docs"])
        seen += part["docs"]
        page = site / ("es/index.html" if language == "es" else "index.html")
        settings = re.search(r'<script id="__search_index" type="application/json">(.*?)</script>',
                             page.read_text(encoding="utf-8"), re.S)
        assert settings and json.loads(settings.group(1)) == {"language": language}, page
    assert sorted(map(json.dumps, seen)) == sorted(map(json.dumps, combined["docs"]))


# A language's index, downloaded when its reader goes to search, as a phone downloads it:
# gzipped (level 6, a web server's usual). The raw size is not the limit: leaving answers out
# of search to fit 300 KB raw was the wrong trade.
MAX_INDEX_GZIP_BYTES = 120_000


def test_each_language_index_holds_the_prose_and_names_each_program_without_its_text(site):
    """pipeline/pages/search_text.py: a language's index stays under 120 KB gzipped; it names every program a
    copy button copies (its file's name, as a code title gives it) and holds hardly a line of
    their code (a line of prose may quote one: at most 1 in 100 of the programs' lines)."""
    import html as html_module
    programs = sorted((site / "assets" / "programs").glob("*/*"))
    assert len(programs) >= 50, len(programs)
    lines = {" ".join(line.split()) for p in programs for line in p.read_text().splitlines()
             if len(line.strip()) >= 40 and not line.lstrip().startswith("#")}
    for language in PREFIXES:
        path = site / "search" / f"search_index.{language}.json"
        import gzip
        size = len(gzip.compress(path.read_bytes(), compresslevel=6))
        assert size < MAX_INDEX_GZIP_BYTES, f"{path.name}: {size} bytes gzipped"
        docs = json.loads(path.read_text(encoding="utf-8"))["docs"]
        text = " ".join(" ".join(html_module.unescape(re.sub(
            r"<[^>]+>", " ", d["title"] + " " + d["text"])).split()) for d in docs)
        unnamed = sorted({p.name for p in programs if p.name not in text})
        assert not unnamed, f"{path.name}: programs not named: {unnamed}"
        code = [line for line in lines if line in text]
        assert len(code) <= len(lines) // 100, f"{path.name}: {len(code)} lines of code: {code[:5]}"
