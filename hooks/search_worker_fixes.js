// Appended to Material's search worker by hooks/search_worker.py. It runs after the worker's own
// code has set `self.lunr` (lunr 2.3.9, which has had no release since 2020), before the first
// message builds the index. tests/test_search.py tests both changes.

// 1. Every indexed word found, and no other.
// lunr builds the set of indexed words as a minimal automaton. To merge equal nodes it keys each
// node by `final + (edge label + child id)...`, with nothing between a label and an id. When
// labels are digits the key is ambiguous: {"1": node 1535} and {"1": node 15, "3": node 5} both
// give "011535", so two different nodes are merged. The automaton then holds words that were never
// indexed (and loses some that were), and a search whose wildcard reaches such a word reads a
// posting that does not exist: "TypeError: Cannot read properties of undefined (reading
// '_index')", which Material reports as "Invalid query" and shows as no result. Which words
// collide depends on every word of the index and on node numbering, so it came and went with the
// pages' content (olivernn/lunr.js#279, #503). Ending each child id with a comma makes the key
// read back one way only: a label is always one UTF-16 unit, an id is digits.
lunr.TokenSet.prototype.toString = function () {
  if (this._str) return this._str
  var str = this.final ? "1" : "0", labels = Object.keys(this.edges).sort()
  for (var i = 0; i < labels.length; i++) str += labels[i] + this.edges[labels[i]].id + ","
  return str
}

// 2. A pasted message finds the section that holds it.
// Material looks up every word of a query as a prefix, and a word found in a section's title
// counts a thousand times one found in its text. A pasted log line has many words, so a section
// whose title holds one of them ("GPU", "libraries") came before the section that holds the whole
// message; Material's own bonus for holding more of the words (at most 2x) cannot make up for it.
// Here each result's score is multiplied by the square of the share of the query's words it
// holds: a one- or two-word query whose words a result all holds ranks as before. And a word made
// of wildcards alone (what Material makes of "**" or "/**<" in pasted code) matched every word of
// every title: it is left out.
lunr.Index.prototype.search = function (queryString) {
  var terms = []
  var results = this.query(function (query) {
    new lunr.QueryParser(queryString, query).parse()
    query.clauses = query.clauses.filter(function (clause) { return /[^*]/.test(clause.term) })
    query.clauses.forEach(function (clause) {
      if (clause.presence !== lunr.Query.presence.PROHIBITED)
        terms.push(clause.term.replace(/^\*+|\*+$/g, ""))
    })
  })
  if (terms.length < 2) return results
  results.forEach(function (result) {
    var found = Object.keys(result.matchData.metadata)
    var held = terms.filter(function (term) {
      return found.some(function (word) { return word.lastIndexOf(term, 0) === 0 })
    }).length
    result.score *= Math.pow(held / terms.length, 2)
  })
  return results.sort(function (a, b) { return b.score - a.score })
}
