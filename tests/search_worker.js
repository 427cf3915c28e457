// Loads a search worker file as the browser does (Material's, or the site's with lunr's fix) and
// asks its lunr about token sets, or asks it queries. Run by tests/search_node.py.
//
//   node tests/search_worker.js WORKER keys
//     The merge keys lunr gives two different nodes: {"1": node 1535} and {"1": node 15,
//     "3": node 5}. Prints {"a": KEY, "b": KEY}.
//   node tests/search_worker.js WORKER words INDEX FIRST LAST
//     Indexes the documents of INDEX (a search_index.<lang>.json) as the worker does, then for
//     each node numbering offset from FIRST to LAST builds lunr's token set from the indexed
//     terms and compares the words it holds with the terms. Prints {"terms": N, "offsets": [...
//     {"offset", "extra": [...], "missing": [...]} for each offset where they differ]}.
//   node tests/search_worker.js WORKER serve INDEX
//     Indexes the documents of INDEX as the worker does, once, then reads a JSON list of queries
//     per line of stdin and asks the worker each as the search box does. Writes a line per list:
//     [[{"location", "score", "text"} for each result of a page] for each page] for each query.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const [workerFile, command, ...args] = process.argv.slice(2);
const folder = path.dirname(path.resolve(workerFile));
let handler;
let reply;
Object.assign(globalThis, {
  self: globalThis,
  addEventListener: (type, fn) => { handler = fn; },
  postMessage: (message) => { reply = message; },
  importScripts: (...urls) => {
    for (const url of urls) vm.runInThisContext(fs.readFileSync(path.resolve(folder, url), "utf8"));
  },
});
vm.runInThisContext(fs.readFileSync(workerFile, "utf8"), { filename: workerFile });

function node(id, edges) {
  const set = new lunr.TokenSet();
  set.id = id;
  set.edges = edges;
  return set;
}

async function main() {
  if (command === "keys") {
    const a = node(1, { 1: node(1535, {}) });
    const b = node(2, { 1: node(15, {}), 3: node(5, {}) });
    return { a: a.toString(), b: b.toString() };
  }
  if (command === "words") {
    const [indexFile, first, last] = args;
    const index = JSON.parse(fs.readFileSync(indexFile, "utf8"));
    let terms;
    const createTokenSet = lunr.Builder.prototype.createTokenSet;
    lunr.Builder.prototype.createTokenSet = function () {
      terms = Object.keys(this.invertedIndex).sort();
      return createTokenSet.call(this);
    };
    await handler({ data: { type: 0, data: { config: index.config, docs: index.docs,
                                             options: { suggest: true } } } });
    if (!reply || reply.type !== 1) throw new Error(`the worker did not get ready: ${JSON.stringify(reply)}`);
    const known = new Set(terms);
    const offsets = [];
    for (let offset = +first; offset <= +last; offset++) {
      lunr.TokenSet._nextId = 1 + offset;
      const words = lunr.TokenSet.fromArray(terms).toArray();
      const held = new Set(words);
      const extra = words.filter((w) => !known.has(w));
      const missing = terms.filter((t) => !held.has(t));
      if (extra.length || missing.length) offsets.push({ offset, extra, missing });
    }
    return { terms: terms.length, offsets };
  }
  if (command === "serve") {
    const [indexFile] = args;
    const index = JSON.parse(fs.readFileSync(indexFile, "utf8"));
    await handler({ data: { type: 0, data: { config: index.config, docs: index.docs,
                                             options: { suggest: true } } } });
    if (!reply || reply.type !== 1) throw new Error(`the worker did not get ready: ${JSON.stringify(reply)}`);
    // the index is built once; each line asked after it costs only its queries. Stdout carries
    // only the answers: what the worker logs goes to stderr.
    console.log = console.info = console.warn;
    const lines = require("readline").createInterface({ input: process.stdin });
    for await (const line of lines) {
      const answers = [];
      for (const query of JSON.parse(line)) {
        await handler({ data: { type: 2, data: query } });
        answers.push(reply.data.items.map((page) => page.map((item) => (
          { location: item.location, score: item.score, text: item.text }))));
      }
      process.stdout.write(`${JSON.stringify(answers)}\n`);
    }
    return null;
  }
  throw new Error(`unknown command ${command}`);
}

main().then((result) => result !== null && process.stdout.write(JSON.stringify(result)),
            (error) => { process.stderr.write(`${error.stack}\n`); process.exit(1); });
