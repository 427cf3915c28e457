// A chart, diagram or table wider than its column (on a phone) scrolls sideways inside its box.
// A box the hook marked with data-scroll-hint (pipeline/mkdocs_hook.py) gets data-overflowing
// while its content is wider than it is, and site.css then shows the hint, in the page's
// language, above what the reader cannot see yet. Kept up to date as the box is laid out or
// resized. A Markdown table's box is made by Material's script when the page loads: it takes
// the words its table carries (data-scroll-hint-words), after Material has wrapped it.
(() => {
  const mark = box =>
    box.toggleAttribute("data-overflowing", box.scrollWidth > box.clientWidth + 1);
  const watch = "ResizeObserver" in window
    ? new ResizeObserver(entries => entries.forEach(entry => mark(entry.target)))
    : null;
  const seen = new WeakSet();
  const setUp = () => {
    document.querySelectorAll(".md-typeset__scrollwrap").forEach(box => {
      const table = box.querySelector("table[data-scroll-hint-words]");
      if (table && !box.hasAttribute("data-scroll-hint"))
        box.setAttribute("data-scroll-hint", table.dataset.scrollHintWords);
    });
    document.querySelectorAll("[data-scroll-hint]").forEach(box => {
      if (seen.has(box)) return;
      seen.add(box);
      mark(box);
      if (watch) watch.observe(box);
    });
  };
  setUp();
  // Material wraps the tables when its document$ emits (after this script has run).
  if (window.document$) window.document$.subscribe(setUp);
  else document.addEventListener("DOMContentLoaded", setUp);
  if (!watch) window.addEventListener("resize", () =>
    document.querySelectorAll("[data-scroll-hint]").forEach(mark));
})();
