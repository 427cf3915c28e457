"""hooks/search_index.py: one search index per language, next to the combined one."""
from __future__ import annotations

import importlib.util
import json
import re

from conftest import REPO

spec = importlib.util.spec_from_file_location("search_index_hook", REPO / "hooks" / "search_index.py")
hook = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hook)

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
