// Renders at build time what would otherwise run in the reader's browser (see static_render.py):
//   {"dot": [source, ...], "dot_attributes": {"graph": {}, "node": {}, "edge": {}}}
//                                             Graphviz diagrams -> SVG          (@viz-js/viz)
//   {"math": [html, ...]}                     TeX in HTML fragments -> SVG      (MathJax 3)
//   {"purge": {"css": [css, ...], "html": s, "context": [css, ...]}}
//                                             CSS rules that s never uses, removed (PurgeCSS)
// reads one JSON request on stdin, writes {"dot": [...], "math": [...], "purge": [...]} on stdout.
// A bad input (a DOT syntax error, a TeX error) exits 1 with one line on stderr.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);

function fail(message) {
  process.stderr.write(message.replace(/\s+/g, " ").trim() + "\n");
  process.exit(1);
}

async function renderDot(sources, attributes = {}) {
  const viz = await (await import("@viz-js/viz")).instance();
  const options = {
    format: "svg",
    graphAttributes: attributes.graph || {},
    nodeAttributes: attributes.node || {},
    edgeAttributes: attributes.edge || {},
  };
  return sources.map((source, i) => {
    const result = viz.render(source, options);
    const errors = result.errors.filter((e) => e.level === "error");
    if (result.status !== "success" || errors.length) {
      fail(`diagram ${i + 1}: ${errors.map((e) => e.message).join("; ") || "Graphviz failed"}`);
    }
    return result.output;
  });
}

async function typesetMath(fragments) {
  // The same settings the notebooks were typeset with in the browser: $...$ inline,
  // $$...$$ displayed, \$ for a dollar sign. The hidden MathML copy (assistive-mml) is what
  // screen readers read. All fragments are typeset in one document, whose glyphs are defined
  // once (fontCache "global": `cache`, an <svg> the page holds once, which every formula's
  // <use> elements point into) instead of in every formula: a notebook's formulas weighed
  // 150 KB, most of it the same letters' outlines again and again.
  const MathJax = await require("mathjax").init({
    loader: {
      load: ["input/tex", "output/svg", "adaptors/liteDOM", "a11y/assistive-mml"],
      versionWarnings: false,
    },
    tex: {
      inlineMath: [["$", "$"], ["\\(", "\\)"]],
      displayMath: [["$$", "$$"], ["\\[", "\\]"]],
      processEscapes: true,
      formatError: (jax, err) => fail(`math: ${err.message}`),
    },
    svg: { fontCache: "global" },
    startup: { typeset: false },
  });
  const adaptor = MathJax.startup.adaptor;
  const body = fragments.map((html, i) => `<div data-fragment="${i}">${html}</div>`).join("");
  const doc = MathJax.startup.getDocument(`<html><head></head><body>${body}</body></html>`);
  doc.render();
  // Rendering puts the glyphs' <svg> at the end of the body, after the fragments.
  const nodes = adaptor.childNodes(adaptor.body(doc.document));
  const parts = nodes.filter((node) => adaptor.kind(node) === "div");
  const cache = nodes.find((node) => adaptor.kind(node) === "svg");
  const rendered = parts.map((part) => {
    const html = adaptor.innerHTML(part);
    return { html, count: (html.match(/<mjx-container\b/g) || []).length };
  });
  const css = adaptor.textContent(MathJax.svgStylesheet());
  return { fragments: rendered, css, cache: cache ? adaptor.outerHTML(cache) : "" };
}

async function purge({ css, html, context = [] }) {
  // The HTML extractor reads attribute values whole ([data-mime-type="application/vnd.jupyter.
  // stderr"]). Material adds classes at run time (md-typeset__scrollwrap around tables):
  // selectors with an md- class are kept. `context` is the page's other CSS: every custom
  // property it reads (the Pygments colours read --jp-mirror-editor-*) is kept, whether or not
  // its rules match, through one rule on `html` that reads them all. It goes first: PurgeCSS
  // drops a file's unused properties right after reading that file.
  const { PurgeCSS } = await import("purgecss");
  const { default: purgeHtml } = await import("purgecss-from-html");
  const read = new Set(context.flatMap((c) => [...c.matchAll(/var\(\s*(--[\w-]+)/g)].map((m) => m[1])));
  const uses = `html{${[...read].map((name) => `color:var(${name})`).join(";")}}`;
  const results = await new PurgeCSS().purge({
    content: [{ raw: html, extension: "html" }],
    css: [uses, ...css].map((raw) => ({ raw })),
    extractors: [{ extractor: purgeHtml, extensions: ["html"] }],
    safelist: { standard: [/^md-/] },
    variables: true, // also drop custom properties (--jp-*, --md-*) no kept rule reads
    keyframes: true,
    fontFace: true,
  });
  return results.slice(1).map((r) => r.css);
}

let request;
try {
  request = JSON.parse(readFileSync(0, "utf-8"));
} catch (err) {
  fail(`static_render: the request on stdin is not JSON (${err.message})`);
}
const answer = {};
if (request.dot) answer.dot = await renderDot(request.dot, request.dot_attributes);
if (request.math) answer.math = await typesetMath(request.math);
if (request.purge) answer.purge = await purge(request.purge);
process.stdout.write(JSON.stringify(answer));
