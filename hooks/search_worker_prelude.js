// Put before Material's search worker by hooks/search_worker.py: it runs before the worker's own
// code registers its message listener. tests/test_search.py tests it.
//
// A query is read as plain text, as a pasted log line is. Material reads words in double quotes
// as words that must all be found, and a word starting with `+` or `-` as one that must (or must
// not) be found, each without a wildcard: a line such as `run with TORCH_LOGS="+dynamic"` found
// nothing unless the site held that exact word, and `-1` in a log hid every page holding a 1.
// Here double quotes are read as spaces, and a `+` or `-` that starts a word is dropped.
self.addEventListener = (function (add) {
  return function (type, listener, options) {
    if (type !== "message") return add.call(self, type, listener, options)
    return add.call(self, type, function (event) {
      var message = event.data
      if (message && message.type === 2 && typeof message.data === "string")
        return listener.call(this, { data: { type: 2, data: message.data
          .replace(/"/g, " ").replace(/(^|\s)[+-]+(?=\S)/g, "$1") } })
      return listener.call(this, event)
    }, options)
  }
})(self.addEventListener)
