"""What a rebuild reuses (`make serve` keeps its process): a page's search entries, a code
block's tokens, a snippet's imports and a library file's answers are reused while their inputs are unchanged, and made
again when an input changes. Each is judged against the same work done from scratch."""
from __future__ import annotations

import os
from types import SimpleNamespace

from material.plugins.search.plugin import SearchIndex

from conftest import REPO, module_from
from pipeline.claims import messages
from pipeline.running import snippets


def _hook():
    return module_from(REPO / "pipeline" / "pages" / "hooks" / "search_entries_cache.py")


def _page(content: str, url: str = "page/") -> SimpleNamespace:
    return SimpleNamespace(url=url, title="Page", meta={}, toc=[], content=content)


def _entries(add, page) -> list[dict]:
    index = SearchIndex(separator=r"[\s\-]+", lang=["en"], pipeline=[], fields={})
    add(index, page)
    return index.entries


def test_a_pages_search_entries_are_reused_only_while_the_page_is_the_same():
    hook = _hook()
    original = hook._original
    one = '<h1 id="a">A</h1><p>first text</p><h2 id="b">B</h2><p>second</p>'
    fresh = _entries(original, _page(one))
    assert len(fresh) == 2 and "second" in fresh[1]["text"]
    first = _entries(hook._add_entry_from_context, _page(one))
    first[0]["text"] = "changed by a later step"  # what the index does next must not leak back
    again = _entries(hook._add_entry_from_context, _page(one))
    assert first != fresh and again == fresh
    edited = one.replace("second", "second, edited")
    assert _entries(hook._add_entry_from_context, _page(edited)) == \
        _entries(original, _page(edited)) != fresh
    other = _entries(hook._add_entry_from_context, _page(one, url="other/"))
    assert other == _entries(original, _page(one, url="other/")) != fresh


def test_a_code_blocks_tokens_are_reused_and_each_block_formatted_as_pygments_does():
    """The same text in two pages (a title, highlighted lines of its own) and under another
    lexer or lexer option: each block is what Pygments makes of it from scratch."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer, TextLexer

    hook = module_from(REPO / "pipeline" / "pages" / "hooks" / "highlight_memo.py")
    text = "import keras\nlayer = keras.layers.LSTM(64)  # cuDNN\n\n"
    cases = [(PythonLexer(), HtmlFormatter(filename="lstm.py")),
             (PythonLexer(), HtmlFormatter(filename="programa completo", hl_lines=[2])),
             (PythonLexer(stripnl=False), HtmlFormatter()),
             (TextLexer(), HtmlFormatter())]
    made = [hook._highlight(text, lexer, formatter) for lexer, formatter in cases]
    assert made == [highlight(text, lexer, formatter) for lexer, formatter in cases]
    assert len(set(made)) == len(cases)  # each case is another block
    assert len(hook._KEPT) == 3  # the second Python block reused the first one's tokens
    edited = text.replace("64", "128")
    assert hook._highlight(edited, PythonLexer(), HtmlFormatter()) == \
        highlight(edited, PythonLexer(), HtmlFormatter())


def _touch_later(path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_a_snippets_helpers_follow_an_edit_of_its_imports(tmp_path):
    root = tmp_path / "snippets"
    (root / "t").mkdir(parents=True)
    (root / "t" / "_helper.py").write_text("X = 1\n")
    main = root / "t" / "main.py"
    main.write_text("print(1)\n")
    assert snippets.discover(root)[0].helpers == ()
    main.write_text("import _helper\nprint(_helper.X)\n")
    _touch_later(main)
    (found,) = snippets.discover(root)
    assert [p.name for p in found.helpers] == ["_helper.py"]


def test_a_library_files_answer_follows_an_edit_of_the_file(tmp_path):
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"\0old words\0")
    search = messages.FileSearch()
    assert search.holds(lib, "old words") and not search.holds(lib, "new words")
    lib.write_bytes(b"\0new words, longer\0")
    _touch_later(lib)
    assert messages.FileSearch().holds(lib, "new words") and not search.holds(lib, "old words")
