// A chart, diagram or table wider than its column (on a phone) scrolls sideways inside its box.
// A box the hook marked with data-scroll-hint (pipeline/pages/hooks/build.py) gets data-overflowing
// while its content is wider than it is, and site.css then shows the hint, in the page's
// language, above what the reader cannot see yet. Kept up to date as the box is laid out or
// resized. A Markdown table's box is made by Material's script when the page loads: it takes
// the words its table carries (data-scroll-hint-words), after Material has wrapped it.
(() => {
  // Every width is read before any mark is written: a read after a write would make the browser
  // lay the page out again, once per box (a long task on a long page).
  const mark = boxes => {
    const over = boxes.map(box => box.scrollWidth > box.clientWidth + 1);
    boxes.forEach((box, i) => box.toggleAttribute("data-overflowing", over[i]));
  };
  // A ResizeObserver reports each box once it is laid out (and again on each resize), when the
  // browser has the widths at hand: nothing is measured while the page is still being built.
  const watch = "ResizeObserver" in window
    ? new ResizeObserver(entries => mark(entries.map(entry => entry.target)))
    : null;
  const seen = new WeakSet();
  const setUp = () => {
    document.querySelectorAll(".md-typeset__scrollwrap").forEach(box => {
      const table = box.querySelector("table[data-scroll-hint-words]");
      if (table && !box.hasAttribute("data-scroll-hint"))
        box.setAttribute("data-scroll-hint", table.dataset.scrollHintWords);
    });
    const added = [...document.querySelectorAll("[data-scroll-hint]")]
      .filter(box => !seen.has(box));
    added.forEach(box => seen.add(box));
    if (watch) added.forEach(box => watch.observe(box));
    else mark(added);
  };
  setUp();
  // Material wraps the tables when its document$ emits (after this script has run).
  if (window.document$) window.document$.subscribe(setUp);
  else document.addEventListener("DOMContentLoaded", setUp);
  if (!watch) window.addEventListener("resize", () =>
    mark([...document.querySelectorAll("[data-scroll-hint]")]));
})();
