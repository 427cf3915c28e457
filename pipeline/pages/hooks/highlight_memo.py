"""Pygments reads each code block once a process, not once a page and language.

The same programs and outputs appear in both languages, and a program's listing in every page
that shows it: a build coloured 1064 blocks, of 511 different texts, and reading them into
tokens (Pygments' lexers) was most of a quarter of a cold build (cProfile). This hook keeps, in
the process, the tokens of each text, keyed by the text, the lexer and its options, and lets
pymdownx.highlight format them as before: the title, line numbers and highlighted lines of
each block are its own, and the site is byte for byte what it was. Under `make serve`, a page
rebuilt after an edit reads only its new blocks.
"""
from __future__ import annotations

from collections import OrderedDict

import pymdownx.highlight
from pygments import format as pygments_format

_KEPT: OrderedDict[tuple, tuple] = OrderedDict()
LIMIT = 4096  # texts; a few tens of MB at most


def _tokens(code: str, lexer) -> tuple:
    key = (type(lexer), repr(sorted(lexer.options.items())), code)
    if key in _KEPT:
        _KEPT.move_to_end(key)
        return _KEPT[key]
    tokens = _KEPT[key] = tuple(lexer.get_tokens(code))
    if len(_KEPT) > LIMIT:
        _KEPT.popitem(last=False)
    return tokens


def _highlight(code, lexer, formatter, outfile=None):
    """pygments.highlight, with the lexing kept."""
    return pygments_format(_tokens(code, lexer), formatter, outfile)


def on_startup(command, dirty):
    pymdownx.highlight.highlight = _highlight
