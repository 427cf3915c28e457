"""Lighthouse on every page of the built site, in both languages.

    make quality                                  # builds site/ if needed, installs Lighthouse
    .venv/bin/python quality/lighthouse_report.py [--site DIR] [--only PATTERN] [--runs N] [--keep DIR]

Serves the built site (default: site/) on 127.0.0.1, under the path of mkdocs.yml's site_url
as it is published (/cudnn-rnn-guide/), gzip-compressed as GitHub Pages serves it, runs Lighthouse's CLI (pinned in
quality/package.json, installed into quality/node_modules) with Debian's chromium on each
page, one after the other, with Lighthouse's default mobile preset (simulated slow 4G and a
4x slower CPU), and prints per page the performance, accessibility, best-practices and SEO
scores and the page weight (bytes transferred), then the audits that cost points on pages
below target, then a summary line. Exits 1 when a page is below target, 2 when the report
could not run (site not built, chromium or Lighthouse missing, a Lighthouse run failed).

A page's performance score moves by a few points from one run to the next on the same build
(machine load, timers). As Lighthouse's documentation advises (docs/variability.md: "Run
Lighthouse multiple times"), each page is run --runs times (3 by default) and the report is the
median run, picked by Lighthouse's own computeMedianRun (core/lib/median-run.js: the run
nearest the median first paint and time to interactive); the row also lists every run's
performance score, lowest first.

One run takes about 12 seconds a page on a 2-core machine: some 15 minutes for the whole site
(25 pages, 3 runs each); `--runs 1` for a quick look.
Nothing is fetched from another host: the pages load only what the site itself serves, and
chromium runs with its background networking turned off.
"""
from __future__ import annotations

import argparse
import fnmatch
import functools
import gzip
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUALITY = REPO / "quality"
LIGHTHOUSE = QUALITY / "node_modules" / ".bin" / "lighthouse"
MEDIAN_RUN = QUALITY / "node_modules" / "lighthouse" / "core" / "lib" / "median-run.js"
# Prints the index of the median run among the JSON reports named on the command line.
PICK_MEDIAN = """
import {readFileSync} from "node:fs";
import {pathToFileURL} from "node:url";
const [module, ...files] = process.argv.slice(1);
const {computeMedianRun} = await import(pathToFileURL(module).href);
const runs = files.map(f => JSON.parse(readFileSync(f, "utf8")));
console.log(runs.indexOf(computeMedianRun(runs)));
"""

CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
TARGETS = {"performance": 95, "accessibility": 95, "best-practices": 95, "seo": 90}
SHORT = {"performance": "perf", "accessibility": "a11y", "best-practices": "best", "seo": "seo"}
CHROME_FLAGS = ("--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                "--disable-background-networking --disable-component-update --disable-sync")
PAGE_TIMEOUT = 300  # seconds for one Lighthouse run


class ReportError(Exception):
    """Why the report cannot run: printed as one line, exit code 2."""


def pages_of(site: Path) -> list[str]:
    """URL paths of every HTML page: English first, then the other languages. Not the HTML
    fragments under assets/ (a collapsed block's code, loaded into its page when opened:
    pipeline/pages/page_weight.py), which no reader opens as a page."""
    paths = []
    for html in site.rglob("*.html"):
        rel = html.relative_to(site).as_posix()
        if html.relative_to(site).parts[0] == "assets":
            continue
        paths.append("/" + (rel[: -len("index.html")] if rel.endswith("index.html") else rel))
    return sorted(paths, key=lambda p: (p.startswith("/es/"), p))


def site_prefix() -> str:
    """The path the site is published under, from mkdocs.yml's site_url ("/cudnn-rnn-guide/"):
    served there, the pages' links that start with it (the 404 page's, the sitemap's) work."""
    m = re.search(r"^site_url:\s*(\S+)", (REPO / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    path = urllib.parse.urlsplit(m.group(1)).path.strip("/") if m else ""
    return f"/{path}/" if path else "/"


COMPRESSED = {".html", ".css", ".js", ".mjs", ".json", ".svg", ".xml", ".txt", ".ipynb", ".map"}


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the site under `prefix`, gzip-compressed like GitHub Pages and most hosts serve
    text (Python's own server sends it uncompressed, which would weigh every page 3-5x)."""
    prefix = "/"
    _gzipped: dict = {}  # (path, mtime) -> compressed bytes, shared by all requests

    def translate_path(self, path):
        path = path.split("?", 1)[0].split("#", 1)[0]
        if not path.startswith(self.prefix):
            return str(Path(self.directory) / "no such file")  # outside the site: 404
        return super().translate_path("/" + path[len(self.prefix):])

    def do_GET(self):
        local = Path(self.translate_path(self.path))
        if local.is_dir() and self.path.split("?")[0].endswith("/"):
            local = local / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and local.suffix in COMPRESSED and local.is_file()):
            return super().do_GET()
        key = (str(local), local.stat().st_mtime_ns)
        if key not in self._gzipped:
            self._gzipped[key] = gzip.compress(local.read_bytes(), compresslevel=6, mtime=0)
        body = self._gzipped[key]
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(local)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # one line per request would drown the report
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the browser closing a connection early is not worth a traceback


def serve(site: Path, prefix: str) -> _Server:
    handler = functools.partial(type("Handler", (_Handler,), {"prefix": prefix}),
                                directory=str(site))
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_lighthouse(url: str, chrome: str, out: Path, preset: str) -> dict:
    cmd = [str(LIGHTHOUSE), url, "--output=json", f"--output-path={out}",
           f"--only-categories={','.join(CATEGORIES)}", f"--chrome-flags={CHROME_FLAGS}",
           "--quiet"]
    if preset == "desktop":
        cmd.append("--preset=desktop")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PAGE_TIMEOUT,
                              env={**os.environ, "CHROME_PATH": chrome})
    except subprocess.TimeoutExpired:
        raise ReportError(f"lighthouse took more than {PAGE_TIMEOUT} s on {url}")
    if proc.returncode != 0 or not out.is_file():
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise ReportError(f"lighthouse failed on {url} (exit {proc.returncode}): {last}")
    report = json.loads(out.read_text(encoding="utf-8"))
    if report.get("runtimeError"):
        raise ReportError(f"lighthouse could not load {url}: {report['runtimeError']['message']}")
    return report


def median_run(outs: list[Path]) -> int:
    """Index of the run that Lighthouse's computeMedianRun picks among these reports."""
    if len(outs) == 1:
        return 0
    proc = subprocess.run(["node", "--input-type=module", "-e", PICK_MEDIAN, str(MEDIAN_RUN),
                           *map(str, outs)], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0 or not proc.stdout.strip().isdigit():
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise ReportError(f"computeMedianRun failed on {outs[0].name}: {last}")
    return int(proc.stdout)


def summarise(path: str, report: dict) -> dict:
    scores = {c: report["categories"][c]["score"] for c in CATEGORIES}
    scores = {c: (None if s is None else round(s * 100)) for c, s in scores.items()}
    weight = report["audits"]["total-byte-weight"].get("numericValue") or 0
    below = [c for c in CATEGORIES if scores[c] is None or scores[c] < TARGETS[c]]
    losses = []  # the audits that cost points, in the categories below target
    for c in below:
        for ref in report["categories"][c]["auditRefs"]:
            audit = report["audits"][ref["id"]]
            if ref.get("weight") and audit.get("score") is not None and audit["score"] < 1:
                shown = audit.get("displayValue") or ""
                losses.append(f"{SHORT[c]}: {ref['id']} ({audit['score']:.2f}) {shown}".rstrip())
    return {"page": path, "scores": scores, "weight": int(weight), "below": below,
            "losses": losses, "spread": ""}


def fmt_row(row: dict) -> str:
    cells = []
    for c in CATEGORIES:
        s = row["scores"][c]
        cells.append(f"{'-' if s is None else s:>4}{'!' if c in row['below'] else ' '}")
    return f"{row['page']:<40} {' '.join(cells)} {row['weight'] / 1024:>9.0f}  {row['spread']}".rstrip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", type=Path, default=REPO / "site", help="built site (default site/)")
    ap.add_argument("--only", metavar="PATTERN", help="only pages whose URL path matches, e.g. '/es/*'")
    ap.add_argument("--preset", choices=("mobile", "desktop"), default="mobile")
    ap.add_argument("--runs", type=int, default=3, metavar="N",
                    help="Lighthouse runs per page; the median run is reported (default 3)")
    ap.add_argument("--keep", type=Path, metavar="DIR",
                    help="keep each page's JSON reports here (NAME.json: the median run)")
    args = ap.parse_args(argv)
    if args.runs < 1:
        raise ReportError(f"--runs must be 1 or more, not {args.runs}")

    site = args.site.resolve()
    if not (site / "index.html").is_file():
        raise ReportError(f"{site} holds no built site: run `make build` first")
    chrome = os.environ.get("CHROME_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    if not (os.path.isfile(chrome) and os.access(chrome, os.X_OK)):
        raise ReportError(f"chromium not found at {chrome}: `apt-get install chromium` "
                          "or set CHROME_PATH")
    if not LIGHTHOUSE.exists():
        raise ReportError(f"{LIGHTHOUSE} is missing: run `make quality` "
                          "(or `npm ci --prefix quality`)")
    if shutil.which("node") is None:
        raise ReportError("node is not on PATH: Lighthouse needs Node.js")
    pages = pages_of(site)
    if args.only:
        pages = [p for p in pages if fnmatch.fnmatch(p, args.only)]
    if not pages:
        raise ReportError(f"no page of {site} matches {args.only!r}")

    prefix = site_prefix()
    server = serve(site, prefix)
    base = f"http://127.0.0.1:{server.server_address[1]}{prefix.rstrip('/')}"
    print(f"Lighthouse ({args.preset}) on {len(pages)} pages of {site} served at {base}, "
          f"median of {args.runs} run{'s' if args.runs > 1 else ''} a page; "
          f"targets: " + ", ".join(f"{c} >= {t}" for c, t in TARGETS.items()), flush=True)
    print(f"{'page':<40} {'  '.join(f'{SHORT[c]:>4}' for c in CATEGORIES)}  weight KiB"
          + ("  perf of the runs" if args.runs > 1 else ""), flush=True)
    rows, start = [], time.monotonic()
    keep = args.keep.resolve() if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix="lighthouse-") as tmp:
            for path in pages:
                name = (path.strip("/").replace("/", "_") or "index").removesuffix(".html")
                outs = [Path(tmp) / f"{name}.run{n + 1}.json" for n in range(args.runs)]
                reports = [run_lighthouse(base + path, chrome, out, args.preset) for out in outs]
                median = median_run(outs)
                row = summarise(path, reports[median])
                if args.runs > 1:
                    perf = sorted(round(r["categories"]["performance"]["score"] * 100)
                                  for r in reports if r["categories"]["performance"]["score"] is not None)
                    row["spread"] = " ".join(map(str, perf))
                if keep:
                    for out in outs:
                        shutil.copyfile(out, keep / out.name)
                    shutil.copyfile(outs[median], keep / f"{name}.json")
                rows.append(row)
                print(fmt_row(row), flush=True)
    finally:
        server.shutdown()
    elapsed = time.monotonic() - start

    bad = [r for r in rows if r["below"]]
    for r in bad:
        print(f"\n{r['page']} below target in {', '.join(r['below'])}:")
        for line in r["losses"]:
            print(f"  {line}")
    lowest = ", ".join(f"{SHORT[c]} {min((r['scores'][c] or 0) for r in rows)}" for c in CATEGORIES)
    heaviest = max(rows, key=lambda r: r["weight"])
    print(f"\nSUMMARY: {len(rows) - len(bad)}/{len(rows)} pages meet every target "
          f"(lowest: {lowest}; heaviest page {heaviest['page']} {heaviest['weight'] / 1024:.0f} KiB; "
          f"{elapsed / 60:.1f} min)")
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ReportError as e:
        print(f"lighthouse_report: error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
