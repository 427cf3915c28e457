// MathJax 3 settings for the notebook pages (loaded before assets/vendor/mathjax/tex-svg.js,
// which `make` copies from npm: the site loads nothing from another host).
// Only the notebooks' Markdown cells are typeset, so a "$" elsewhere on the site stays a "$".
window.MathJax = {
  tex: {
    inlineMath: [["$", "$"], ["\\(", "\\)"]],
    displayMath: [["$$", "$$"], ["\\[", "\\]"]],
    processEscapes: true,
  },
  svg: { fontCache: "global" },
  startup: {
    typeset: false,
    pageReady() {
      return MathJax.startup.defaultPageReady().then(() => {
        const cells = Array.from(document.querySelectorAll(".jp-MarkdownOutput"));
        return cells.length ? MathJax.typesetPromise(cells) : undefined;
      });
    },
  },
};
