// Search in the language being read. mkdocs-static-i18n writes a single search index holding
// every language, so Material's search listed English and Spanish pages together. Material hands
// that index ({config, docs}) to its search worker with postMessage; keep only the documents whose
// location belongs to this page's language (the language whose folder prefix is the longest match:
// "es/..." is Spanish, anything else English). tests/test_browser.py checks the result.
(() => {
  const settings = document.getElementById("__search_language");
  if (!settings || typeof Worker === "undefined") return;
  const { current, prefixes } = JSON.parse(settings.textContent);
  const languageOf = (location) => {
    let best, length = -1;
    for (const [language, prefix] of Object.entries(prefixes)) {
      if (location.startsWith(prefix) && prefix.length > length) [best, length] = [language, prefix.length];
    }
    return best;
  };
  const postMessage = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    const data = message && message.data;
    if (data && data.config && Array.isArray(data.docs)) {
      const docs = data.docs.filter((doc) => languageOf(doc.location || "") === current);
      message = { ...message, data: { ...data, docs } };
    }
    return postMessage.call(this, message, ...rest);
  };
})();
