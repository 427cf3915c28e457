// A chart or diagram wider than its column (on a phone) scrolls sideways inside its box. A box
// the hook marked with data-scroll-hint (pipeline/mkdocs_hook.py) gets data-overflowing while
// its content is wider than it is, and site.css then shows the hint, in the page's language,
// above what the reader cannot see yet. Kept up to date as the box is laid out or resized.
(() => {
  const mark = box =>
    box.toggleAttribute("data-overflowing", box.scrollWidth > box.clientWidth + 1);
  const boxes = document.querySelectorAll("[data-scroll-hint]");
  const watch = "ResizeObserver" in window
    ? new ResizeObserver(entries => entries.forEach(entry => mark(entry.target)))
    : null;
  boxes.forEach(box => {
    mark(box);
    if (watch) watch.observe(box);
  });
  if (!watch) window.addEventListener("resize", () => boxes.forEach(mark));
})();
