// Put before Material's search worker by pipeline/pages/hooks/search_worker.py: it runs before the worker's own
// code registers its message listener. tests/site/test_search_worker.py tests it.
//
// A query is read as plain text, as a pasted log line is. Material reads words in double quotes
// as words that must all be found, and a word starting with `+` or `-` as one that must (or must
// not) be found, each without a wildcard: a line such as `run with TORCH_LOGS="+dynamic"` found
// nothing unless the site held that exact word, and `-1` in a log hid every page holding a 1.
// Here double quotes are read as spaces, and a `+` or `-` that starts a word is dropped. So is
// every colon: Material reads "RuntimeError:" as the name of a field, and drops a word so named
// that is not one of its fields, so "RuntimeError: rnn: cx is not contiguous" searched "cx is
// not contiguous". The index splits words at colons too (mkdocs.yml, the search separator).
self.addEventListener = (function (add) {
  return function (type, listener, options) {
    if (type !== "message") return add.call(self, type, listener, options)
    return add.call(self, type, function (event) {
      var message = event.data
      if (message && message.type === 2 && typeof message.data === "string")
        return listener.call(this, { data: { type: 2, data: message.data
          .replace(/[":]/g, " ").replace(/(^|\s)[+-]+(?=\S)/g, "$1") } })
      return listener.call(this, event)
    }, options)
  }
})(self.addEventListener)

// A result shows the section that answers, from the words it matched.
// Material's worker multiplies each result's score by 1 + boost², boost being the share of the
// query's words the result holds, plus 1 for the top of a page (its text before the first
// heading): a page's top got up to 5 times its score where a section got at most 2 times. Its
// list then shows each page's best result with its text and folds the others under "N more on
// this page", so for a pasted message a page's introduction was shown and the section that
// quotes the message folded. Here, within each page, its top is scored as a section is and the
// results are in the order of those scores (the pages keep Material's order). A result's
// text also starts at its first block (paragraph, list, code) that holds a word of the query, with
// "…" for what is left out before it: a section's first lines may be screens away from the match
// (overrides/assets/site.css keeps each result a few lines tall).
self.postMessage = (function (post) {
  function share(terms) {
    var words = Object.keys(terms || {})
    return words.length ? words.filter(function (w) { return terms[w] }).length / words.length : 0
  }
  function fair(item) {
    if (!item.score || item.location.indexOf("#") >= 0) return item.score
    var found = share(item.terms)
    return item.score / (1 + Math.pow(1 + found, 2)) * (1 + found * found)
  }
  // The top-level blocks of a result's text: <p>, <pre>, <ul> and <ol> elements, and the text
  // between them.
  function blocks(text) {
    var out = [], depth = 0, start = 0, tag = /<(\/?)(p|pre|ul|ol)>/g, m
    while ((m = tag.exec(text))) {
      if (!m[1]) {
        if (depth++ === 0 && m.index > start) { out.push(text.slice(start, m.index)); start = m.index }
      } else if (depth > 0 && --depth === 0) {
        out.push(text.slice(start, tag.lastIndex)); start = tag.lastIndex
      }
    }
    if (start < text.length) out.push(text.slice(start))
    return out
  }
  // Only the blocks that can show are kept: a result is at most 14em tall (site.css), and the
  // whole text of every section of the first ten pages listed (some 200 sections, 90 KB for a
  // pasted message) made the list slow to draw. Whole blocks, so that no tag is cut open.
  var SHOWN = 1500  // characters of HTML: more than 14em of text at a phone's width
  function fromMatch(text) {
    if (typeof text !== "string") return text
    var parts = blocks(text), first = 0
    while (first < parts.length && parts[first].indexOf("<mark>") < 0) first++
    if (first === parts.length) first = 0  // no word of the query in the text: from its start
    if (!parts.length) return text
    var last = first + 1, length = parts[first].length
    while (last < parts.length && length < SHOWN) length += parts[last++].length
    var kept = parts.slice(first, last).join("")
    if (first === 0) return kept
    return /^\s*<p>/.test(kept) ? kept.replace("<p>", "<p>… ") : "… " + kept
  }
  return function (message) {
    var data = message && message.type === 3 && message.data
    if (data && Array.isArray(data.items)) {
      data.items = data.items.map(function (group) {
        return group.map(function (item) {
          return Object.assign({}, item, { score: fair(item), text: fromMatch(item.text) })
        }).sort(function (a, b) { return b.score - a.score })
      })
    }
    return post.apply(self, arguments)
  }
})(self.postMessage)
