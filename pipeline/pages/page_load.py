"""What a page makes a phone do as it opens, beyond reading it.

- `palette_switching_at_load()`: Material's script, as it starts, marks <body> with
  `data-md-color-switching` (its palette CSS turns every transition off under that mark, with
  the selector `[data-md-color-switching] *`), reads the header's colours, and removes the mark.
  Adding that attribute, like removing it, makes the browser compute the style of every element
  of the page again: on the long pages (3,000 to 4,000 elements) each such pass was one of the
  longest tasks of the load. The page now opens with the mark already on <body>: Material's
  script sets it to the value it has, which changes nothing, and only its removal costs a pass.
  What the reader sees is the same: no transition runs while the page opens, and the palette
  toggle works as before (tests/site/test_pages.py checks both on Material's own script).
- The same holds for the class "js" that Material's script gives <html> (it is "no-js" until
  then): overrides/main.html gives it in the page's head, before there is anything to restyle.
"""
from __future__ import annotations

import re

SWITCHING = "data-md-color-switching"
_BODY = re.compile(rf"<body(?=[\s>])(?![^>]*{SWITCHING})")  # a <body> not marked yet


def palette_switching_at_load(page_html: str) -> str:
    """The page with <body> marked as Material's script marks it when it starts."""
    return _BODY.sub(f"<body {SWITCHING}", page_html, count=1)
