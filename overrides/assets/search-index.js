// The search index: this language's, downloaded when the reader goes to search.
// Material requests "search/search_index.json" (every language, 850 KB) as each page loads, parses
// it on the main thread and hands it to its search worker: on a phone that blocks the page for
// a third of a second and more, for a search most readers never open. Here that request asks for
// this language's file instead (hooks/search_index.py writes one per language), and is sent only
// when the pointer reaches the search box or its button, or the box gets the focus (a click, a
// tap, the "/" shortcut), or at once when the page came from a search result (Material highlights
// the result's terms with the index). tests/test_browser.py checks all three.
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
  if (params.has("h") || params.has("q")) want();
  else for (const type of ["pointerover", "focusin"]) document.addEventListener(type, onEvent, true);
})();
