"""The real site: strict build of both languages, every snippet embedded and shown, en/es parity."""
from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO

DOCS = REPO / "docs"
SNIPPETS = REPO / "snippets"
EMBED = re.compile(r'--8<--\s+"([^"]+)"')
MARKERS = re.compile(r"<!--\s*(output|chart|gpu-chart|gpu-result):\s*(\S+?)\s*-->")


def english_pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if not p.name.endswith(".es.md"))


def spanish_twin(page: Path) -> Path:
    return page.with_name(page.name[:-3] + ".es.md")


def site_path(site: Path, page: Path, lang: str) -> Path:
    rel = page.relative_to(DOCS).with_suffix("")
    base = site / "es" if lang == "es" else site
    return base / "index.html" if rel.name == "index" and rel.parent == Path(".") else \
        base / rel.parent / ("" if rel.name == "index" else rel.name) / "index.html"


def test_every_page_is_built_in_both_languages(site):
    for page in english_pages():
        for lang in ("en", "es"):
            html = site_path(site, page, lang)
            assert html.is_file(), f"{page.relative_to(DOCS)} not built for {lang}: {html}"
            text = html.read_text(encoding="utf-8")
            for marker in ("output:", "chart:", "gpu-chart:", "gpu-result:", "machines-on-record"):
                assert f"<!-- {marker}" not in text, (html, marker)
            assert "--8&lt;--" not in text and "--8<--" not in text, f"unresolved embed in {html}"


def test_outputs_and_charts_are_in_the_pages(site):
    from built_pages import opened  # a chart is loaded as it comes near the screen
    home = opened(site / "index.html")
    assert "TensorFlow           2." in home  # real output of environment/versions.py
    assert 'class="benchmark-chart"' in home and "<svg" in home
    assert "Measured on CPU:" in home or "Measured on GPU:" in home
    es = (site / "es" / "index.html").read_text(encoding="utf-8")
    assert "Salida · ejecutado aquí en una CPU" in es and 'lang="es"' in es


def test_every_spanish_page_has_an_english_twin_and_the_same_snippets():
    for es in DOCS.rglob("*.es.md"):
        assert es.with_name(es.name[:-6] + ".md").is_file(), f"{es} has no English twin"
    for page in english_pages():
        twin = spanish_twin(page)
        assert twin.is_file(), f"{page} has no Spanish twin"
        en_text, es_text = page.read_text(encoding="utf-8"), twin.read_text(encoding="utf-8")
        assert EMBED.findall(en_text) == EMBED.findall(es_text), f"embeds differ: {page.name}"
        assert MARKERS.findall(en_text) == MARKERS.findall(es_text), f"outputs differ: {page.name}"


def _section_exists(path: Path, section: str) -> bool:
    text = path.read_text(encoding="utf-8")
    return f"--8<-- [start:{section}]" in text and f"--8<-- [end:{section}]" in text


def test_every_embed_resolves_and_every_snippet_is_embedded():
    embedded = set()
    for page in DOCS.rglob("*.md"):
        for ref in EMBED.findall(page.read_text(encoding="utf-8")):
            rel, _, section = ref.partition(":")
            path = SNIPPETS / rel
            assert path.is_file(), f"{page.name}: {rel} does not exist"
            if section:
                assert _section_exists(path, section), f"{page.name}: {ref}: no such section"
            embedded.add(rel)
        for kind, rel in MARKERS.findall(page.read_text(encoding="utf-8")):
            if kind in ("output", "gpu-result"):
                assert (SNIPPETS / rel).is_file(), f"{page.name}: output of missing {rel}"
    files = {p.relative_to(SNIPPETS).as_posix() for p in SNIPPETS.rglob("*")
             if p.suffix in (".py", ".c") and "__pycache__" not in p.parts}
    assert files - embedded == set(), "snippet files not embedded in any page"


# What makes a browser fetch: an element's source, or a url() in a style.
LOADS = re.compile(r'<(?:script|link|img|iframe|image|use|feImage|source)\b[^>]+'
                   r'(?:src|href)="(?:https?:)?//|url\(\s*[\'"]?(?:https?:)?//', re.I)


def other_hosts(text: str) -> list[str]:
    return [m.group(0) for m in LOADS.finditer(text)
            if "rel=\"alternate\"" not in m.group(0) and "canonical" not in m.group(0)]


def test_no_page_loads_anything_from_another_host(site):
    """Pages, the blocks they load, and the chart drawings they put in the page."""
    files = sorted(site.rglob("*.html")) + sorted(site.rglob("*.svg"))
    assert any(f.suffix == ".svg" and "charts" in f.parts for f in files), "no chart SVG read"
    for path in files:
        found = other_hosts(path.read_text(encoding="utf-8"))
        assert not found, f"{path}: {found[:3]}"


def test_a_chart_that_loads_from_another_host_is_caught():
    """The break a review planted in a chart: an image from another address."""
    assert other_hosts('<svg><image href="http://127.0.0.1:1/a.png"/></svg>')
    assert other_hosts('<svg><style>@font-face{src:url("https://fonts.example/f.woff")}</style>')
    assert not other_hosts('<svg xmlns="http://www.w3.org/2000/svg"><a href="https://x.org">x</a>')


def test_the_root_404_page_is_in_the_default_language(site):
    """pipeline/pages/hooks/not_found_page.py: a host serves the root 404.html for every missing address; i18n's
    last language pass (Spanish) would leave its own page there."""
    text = (site / "404.html").read_text(encoding="utf-8")
    assert re.search(r'<html lang="en"', text), "the root 404 page is not in English"
    english_name = re.search(r"^site_name:\s*(.+)$", (REPO / "mkdocs.yml").read_text(encoding="utf-8"),
                             re.M).group(1).strip()
    assert f"<title>{english_name}</title>" in text
