// Appended to Material's search worker by pipeline/pages/hooks/search_worker.py. It runs after the worker's own
// code has set `self.lunr` (lunr 2.3.9, which has had no release since 2020), before the first
// message builds the index. tests/site/test_search_worker.py tests both changes.

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
// A query of three words or more is also read as a line that a section may quote: a result's
// longest run of the query's own words in the query's order (whole words, not the longer ones
// Material's wildcard also finds), one after another in its title or its text (at most five
// words lunr does not index, such as "are not at the", between two of them), is how much of the
// line it quotes: from none (one word alone) to all (every indexed word of the query, in a row).
// Its score is multiplied by a million to that share: a section that quotes the whole line counts
// more than a title that holds some of its words (Material weighs a word of a title a thousand
// times one of the text, and a wildcard finds many words in a title such as
// "CUDNN_STATUS_INTERNAL_ERROR_…"); one that holds the words apart gains little. A section
// holding a message its title does not name (a list of a constructor's errors under one heading)
// then comes first for that message.
function longestRun(metadata, field, words) {
  // Material's tokenizer gives each word the position block << 20 | index in its block.
  var tokens = []
  Object.keys(metadata).forEach(function (word) {
    var found = words.indexOf(word) >= 0 && metadata[word][field]
    if (found && found.position)
      found.position.forEach(function (p) { tokens.push({ at: p, word: word }) })
  })
  tokens.sort(function (a, b) { return a.at - b.at })
  var best = 0, run = 0, next = -1, last = -1
  tokens.forEach(function (token) {
    var near = last >= 0 && token.at >>> 20 === last >>> 20 && token.at - last <= 6
    if (near && words[next] === token.word) {
      run++
    } else {
      run = 1
      next = words.indexOf(token.word)
    }
    next++
    last = token.at
    best = Math.max(best, run)
  })
  return best
}
lunr.Index.prototype.search = function (queryString) {
  var terms = [], index = this
  var results = this.query(function (query) {
    new lunr.QueryParser(queryString, query).parse()
    query.clauses = query.clauses.filter(function (clause) { return /[^*]/.test(clause.term) })
    query.clauses.forEach(function (clause) {
      if (clause.presence !== lunr.Query.presence.PROHIBITED)
        terms.push(clause.term.replace(/^\*+|\*+$/g, ""))
    })
  })
  if (terms.length < 2) return results
  // the query's words that the index holds as they are (not "of", which it leaves out)
  var words = terms.filter(function (term) {
    return Object.prototype.hasOwnProperty.call(index.invertedIndex, term)
  })
  var indexed = words.length
  results.forEach(function (result) {
    var found = Object.keys(result.matchData.metadata)
    var held = terms.filter(function (term) {
      return found.some(function (word) { return word.lastIndexOf(term, 0) === 0 })
    }).length
    result.score *= Math.pow(held / terms.length, 2)
    if (indexed >= 3) {
      var run = Math.max(longestRun(result.matchData.metadata, "title", words),
                         longestRun(result.matchData.metadata, "text", words))
      result.score *= Math.pow(1e6, Math.max(0, Math.min((run - 1) / (indexed - 1), 1)))
    }
  })
  return results.sort(function (a, b) { return b.score - a.score })
}

// 3. A pasted line is searched even where it looks like lunr's query syntax.
// lunr reads `:` as a field name's end, `~` and `^` as edit distance and boost (numbers must
// follow), `+` and `-` before a word as required and prohibited, and `\` as an escape. A line
// such as "~/.keras", "a^b" or "x,-" made it refuse the query ("Invalid query", no result). A
// query lunr cannot parse is parsed again with those characters read as spaces. (Quotes, and a
// `+` or `-` that starts a pasted word: pipeline/pages/hooks/search_worker_prelude.js.)
var parse = lunr.QueryParser.prototype.parse
lunr.QueryParser.prototype.parse = function () {
  var clauses = this.query.clauses.length
  try {
    return parse.call(this)
  } catch (error) {
    if (!(error instanceof lunr.QueryParseError)) throw error
    this.query.clauses.length = clauses
    this.lexer = new lunr.QueryLexer(this.lexer.str.replace(/[+\-:~^\\]/g, " "))
    this.currentClause = {}
    this.lexemeIdx = 0
    return parse.call(this)
  }
}
