"""LinkChecker's AnchorCheck, made to parse each page once.

AnchorCheck parses the whole target page again for every link with an anchor (criteria/#a,
criteria/#b... each one a parse of the same page): on this site's long pages that was most of
tests/site/test_links.py's time. LinkChecker keeps a URL's anchor apart (checks criteria/#a and
criteria/#b both) only while a plugin named AnchorCheck is enabled, so a plugin of another name
cannot take its place: this module gives AnchorCheck's own class a `check` that remembers the
anchors of each page (from the parse LinkChecker makes anyway when it crawls the page, or one
parse of its own), and keeps AnchorCheck's test and message. LinkChecker loads it
from $XDG_DATA_HOME/linkchecker/plugins, where tests/site/test_links.py points it; written for
LinkChecker 10.6 (pinned in requirements-test.txt). It defines no plugin of its own.
"""
import threading
import urllib.parse

from linkcheck.htmlutil import linkparse
from linkcheck.plugins import anchorcheck

__all__: list[str] = []

_anchors: dict[str, list] = {}  # page URL without its fragment -> AnchorCheck's list of anchors
_lock = threading.Lock()


def _anchors_of(url_data) -> list:
    """AnchorCheck's list of the anchors of url_data's page: parsed once per page."""
    page = urllib.parse.urldefrag(url_data.url).url
    with _lock:
        anchors = _anchors.get(page)
    if anchors is None:
        found = anchorcheck.UrlAnchorCheck()
        linkparse.find_links(url_data.get_soup(), found.add_anchor, linkparse.AnchorTags)
        anchors = found.anchors
        with _lock:
            _anchors[page] = anchors
    return anchors


def _applies_to(self, url_data):
    # Every HTML page, anchor or not: a page crawled for its links is parsed already, and its
    # anchors are kept for the links into it.
    return url_data.is_html()


def _check_once_per_page(self, url_data):
    """Check content for invalid anchors (one parse per page)."""
    anchors = _anchors_of(url_data)
    if not url_data.anchor:
        return
    check = anchorcheck.UrlAnchorCheck()
    check.anchors = anchors
    check.check_anchor(url_data)


anchorcheck.AnchorCheck.applies_to = _applies_to
anchorcheck.AnchorCheck.check = _check_once_per_page
