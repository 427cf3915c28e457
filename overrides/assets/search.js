// The site's search, around Material's: two parts, one file (one request for every page).
// Both run before Material's script (overrides/main.html).

// The search index: this language's, downloaded when the reader goes to search.
// Material requests "search/search_index.json" (every language, 850 KB) as each page loads, parses
// it on the main thread and hands it to its search worker: on a phone that blocks the page for
// a third of a second and more, for a search most readers never open. Here that request asks for
// this language's file instead (pipeline/pages/hooks/search_index.py writes one per language), and is sent only
// when the pointer reaches the search box or its button, or the box gets the focus (a click, a
// tap, the "/" shortcut), or at once when the page opened with a search (`?q=`). A page opened
// from a search result (`?h=`) marks the terms without the index (below). tests/site/
// and tests/site/test_search_worker.py check these.
(() => {
  const settings = document.getElementById("__search_index");
  if (!settings || typeof XMLHttpRequest === "undefined") return;
  const { language } = JSON.parse(settings.textContent);
  const INDEX = /search\/search_index\.json$/;
  const SEARCH = "[data-md-component=search], label[for='__search']";
  const { open, send } = XMLHttpRequest.prototype;
  const waiting = [];
  let wanted = false;

  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    this.__searchIndex = INDEX.test(String(url));
    if (this.__searchIndex) url = String(url).replace(INDEX, `search/search_index.${language}.json`);
    return open.call(this, method, url, ...rest);
  };
  XMLHttpRequest.prototype.send = function (...args) {
    if (this.__searchIndex && !wanted) return void waiting.push([this, args]);
    return send.apply(this, args);
  };

  const want = () => {
    wanted = true;
    for (const type of ["pointerover", "focusin"]) document.removeEventListener(type, onEvent, true);
    for (const [request, args] of waiting.splice(0)) send.apply(request, args);
  };
  const onEvent = (event) => {
    if (event.target instanceof Element && event.target.closest(SEARCH)) want();
  };
  const params = new URLSearchParams(location.search);
  if (params.has("q")) want();
  else for (const type of ["pointerover", "focusin"]) document.addEventListener(type, onEvent, true);
})();

// The search terms on a page opened from a search result (Material adds them as `?h=`).
//
// Material's own highlighter (feature search.highlight) rewrites the page's HTML: it escapes each
// text, marks every occurrence of each term anywhere in it, even inside the entities it has just
// written, and parses the result again. A term such as "t" (from "doesn't") or "a" then splits
// "&quot;" into "&quo<mark>t</mark>;", so readers saw `&quot;` in headings, prose and code, and
// copied it. This script runs before Material's and takes `h` out of the address, so Material's
// highlighter never runs, and marks the terms with the CSS Custom Highlight API instead: ranges
// painted over the text, which change nothing the reader reads or copies. Terms shorter than
// three characters are not marked, and a term is marked only where a word starts with it (the
// search matched word prefixes). The ranges are static: Material's script moves some blocks into
// wrappers after this runs (tables), which would collapse live ranges. Browsers without the API
// show the page unmarked.
(() => {
  const url = new URL(location.href);
  const query = url.searchParams.get("h");
  if (query === null) return;
  url.searchParams.delete("h");
  history.replaceState(history.state, "", url);
  if (!(window.CSS && CSS.highlights && typeof Highlight === "function")) return;

  const terms = [...new Set(query.toLowerCase().split(/\s+/))]
    .filter((term) => [...term].length >= 3)
    .sort((a, b) => b.length - a.length);  // the longest term first where several start together
  const article = document.querySelector("article");
  if (!terms.length || !article) return;
  const escaped = terms.map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const match = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${escaped.join("|")})`, "giu");

  const ranges = [];
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const found of node.data.matchAll(match)) {
      const end = found.index + found[0].length;
      ranges.push(new StaticRange({ startContainer: node, startOffset: found.index,
                                    endContainer: node, endOffset: end }));
    }
  }
  if (ranges.length) CSS.highlights.set("search-terms", new Highlight(...ranges));
})();
