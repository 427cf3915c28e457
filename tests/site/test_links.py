"""Every internal link and anchor of the built site is valid, in both languages.

LinkChecker (pinned in requirements-test.txt) crawls the site, served by this test process on
127.0.0.1, from the English and the Spanish home pages, with its AnchorCheck test on
(settings: quality/linkcheckerrc). Links to other hosts are only syntax-checked: nothing
connects to the network. Serving over http from this process also keeps LinkChecker, which
drops root privileges to user `nobody`, away from pytest's 0700 temporary directories. The
site is served under the path of its site_url, as published, so the 404 page's links (which
start with that path) resolve too.

LinkChecker checks each URL once: a broken URL linked from several pages is listed with the
first page it was found on.
"""
from __future__ import annotations

import contextlib
import csv
import functools
import os
import re
import http.server
import subprocess
import sys
import textwrap
import threading
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINKCHECKERRC = REPO / "quality" / "linkcheckerrc"
# LinkChecker's command, as its console script runs it, except that started as root it keeps
# root's rights: it would drop to the user nobody, who cannot read its own package or this
# checkout when they lie in a private folder (a temporary directory, /root). It reads only what
# the test's own server serves.
LINKCHECKER = [sys.executable, "-c", "import sys; from linkcheck.command import linkchecker as c; "
               "c.drop_privileges = lambda: None; sys.argv[0] = 'linkchecker'; "
               "sys.exit(c.linkchecker())"]
# LinkChecker loads plugins from $XDG_DATA_HOME/linkchecker/plugins: there, a module that has
# AnchorCheck parse each page once (quality/linkchecker/plugins/anchor_check_once_per_page.py).
PLUGINS_HOME = REPO / "quality"


def site_prefix() -> str:
    """The path the site is published under (from site_url): "/cudnn-rnn-guide/" for
    https://cudnn-rnn-guide.github.io/cudnn-rnn-guide/. The 404 page links from there."""
    m = re.search(r"^site_url:\s*(\S+)", (REPO / "mkdocs.yml").read_text(), re.M)
    path = urllib.parse.urlsplit(m.group(1)).path if m else "/"
    return "/" + path.strip("/") + "/" if path.strip("/") else "/"


class _Handler(http.server.SimpleHTTPRequestHandler):
    prefix = "/"

    def translate_path(self, path):
        if not path.startswith(self.prefix):
            return str(Path(self.directory) / "no-such-file")  # outside the site: 404
        return super().translate_path("/" + path[len(self.prefix):])

    def end_headers(self):
        # LinkChecker waits 0.1 to 0.6 s between two requests to a host (its default of 10 per
        # second), unless the host answers with a "LinkChecker" header; then it waits
        # 1/maxrequestspersecond (quality/linkcheckerrc). This local server is the only host.
        self.send_header("LinkChecker", "tests/site/test_links.py")
        super().end_headers()

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def served(root: Path, prefix: str = "/"):
    """`root` over http on a free port of 127.0.0.1 under the path `prefix` (as published);
    yields the base URL, without its trailing /."""
    handler = functools.partial(type("Handler", (_Handler,), {"prefix": prefix}),
                                directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{prefix.rstrip('/')}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def check_links(root: Path, start_paths: tuple[str, ...] = ("/",), prefix: str = "/",
                apart: tuple[str, ...] = ()) -> tuple[list[str], set[str]]:
    """Crawl the site in `root`, served under `prefix`, from each start path with LinkChecker.

    `apart` names subtrees ("/es/") crawled by a LinkChecker process of their own, at the same
    time as the rest: LinkChecker parses every page it checks an anchor on (most of its time),
    in one thread under the GIL, so two processes use two cores. Each process checks the links
    that leave its subtree but does not crawl past them.

    Returns (problems, checked): one line per broken link or anchor, "page: link -> why", and
    the path of every URL of the site that LinkChecker checked."""
    with served(root, prefix) as base:
        trees = [(p, [s for s in start_paths if s.startswith(p)]) for p in apart]
        rest = [s for s in start_paths if not any(s.startswith(p) for p in apart)]
        runs = []  # (start paths, regular expressions of the URLs not to crawl)
        for tree, starts in trees:
            runs.append((starts, [f"^{re.escape(base)}(?!{re.escape(tree)})"]))
        if rest:
            runs.append((rest, [f"^{re.escape(base + tree)}" for tree in apart]))
        procs = [subprocess.Popen(
            [*LINKCHECKER, "-f", str(LINKCHECKERRC), "--no-status", "--verbose",
             "-o", "csv/utf-8", *(f"--no-follow-url={rx}" for rx in no_follow),
             *(base + s for s in starts)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
            env={**os.environ, "XDG_DATA_HOME": str(PLUGINS_HOME)})
            for starts, no_follow in runs if starts]
        outputs = [(proc, *proc.communicate(timeout=900)) for proc in procs]
    rows = []
    for proc, stdout, stderr in outputs:
        # 0: nothing wrong, 1: broken links or warnings; anything else is LinkChecker failing.
        assert proc.returncode in (0, 1), f"linkchecker exit {proc.returncode}:\n{stderr[-3000:]}"
        found = list(csv.DictReader((line for line in stdout.splitlines()
                                     if line and not line.startswith("#")), delimiter=";"))
        assert found, f"linkchecker printed no result:\n{stdout[-2000:]}\n{stderr[-2000:]}"
        rows += found

    def local(url: str) -> str:
        return url[len(base):] if url.startswith(base) else url

    problems, checked = set(), set()
    for row in rows:
        if row["url"].startswith(base + "/") and row["result"] != "ignored":
            checked.add(local(row["url"]).split("#")[0])
        page = local(row["parentname"]) or "(start URL)"
        link = row["urlname"]
        if row["valid"] != "True":
            problems.add(f"{page}: {link} -> {row['result']}")
        elif row["warningstring"]:
            problems.add(f"{page}: {link} -> {row['warningstring']}")
    return sorted(problems), checked


def test_every_internal_link_and_anchor_is_valid_in_both_languages(site):
    # A code block a page loads when it is opened (assets/blocks/, pipeline/pages/page_weight.py) is a
    # piece of that page, not a page: nothing links to it, and it holds no link.
    pages = {"/" + p.relative_to(site).as_posix().removesuffix("index.html")
             for p in site.rglob("*.html") if p.parent != site / "assets" / "blocks"}
    for block in (site / "assets" / "blocks").glob("*.html"):
        assert "<a " not in block.read_text(encoding="utf-8"), block
    assert "/es/" in pages, "the Spanish site was not built"
    problems, checked = check_links(site, ("/", "/es/", "/404.html"), prefix=site_prefix(),
                                    apart=("/es/",))
    assert not problems, (f"{len(problems)} broken links or anchors (page: link -> why):\n"
                          + "\n".join(problems))
    # The crawl really went through the site: every page of both languages was checked.
    assert not pages - checked, f"pages LinkChecker never reached: {sorted(pages - checked)}"


def test_the_checker_reports_a_broken_link_and_a_broken_anchor(tmp_path):
    """The same function on a three-page site with one broken link and one broken anchor:
    the test above cannot pass because the checker sees nothing."""
    (tmp_path / "guide").mkdir()
    (tmp_path / "index.html").write_text(textwrap.dedent("""\
        <!doctype html><html lang="en"><head><title>Home</title></head><body>
        <h1 id="top">Home</h1>
        <a href="guide/">guide</a> <a href="guide/#setup">a good anchor</a>
        <a href="missing/">a broken link</a>
        <a href="https://example.invalid/never-fetched">another host</a>
        </body></html>"""))
    (tmp_path / "guide" / "index.html").write_text(textwrap.dedent("""\
        <!doctype html><html lang="en"><head><title>Guide</title></head><body>
        <h1 id="setup">Set-up</h1>
        <a href="../#top">back</a> <a href="../#no-such-heading">a broken anchor</a>
        </body></html>"""))
    # One crawl, and /guide/ crawled by a process of its own (as the real site's /es/ is):
    # the same findings.
    for start, apart in ((("/",), ()), (("/", "/guide/"), ("/guide/",))):
        problems, checked = check_links(tmp_path, start, apart=apart)
        assert {"/", "/guide/", "/missing/"} <= checked
        assert len(problems) == 2, problems
        broken_link, broken_anchor = sorted(problems, key=lambda p: "missing/" not in p)
        assert broken_link.startswith("/: missing/ -> 404"), broken_link
        assert broken_anchor.startswith(
            "/guide/: ../#no-such-heading -> Anchor `no-such-heading'"), broken_anchor
