// What a page loads only when the reader gets to it: files the build writes next to the pages
// (same origin), never part of the page itself.
//
// 1. A Python block's copy button copies its whole program (pipeline/pages/page_programs.py): the
//    program's div names its file in data-copy-src. Material's copy button copies the data-copy
//    of the closest element that has one, and reads it as the click happens, so the file is
//    fetched before: when the block comes near the screen, or the pointer or the focus reaches
//    it. A click that still comes first waits for the file, then clicks again (the click's user
//    activation lasts seconds; the file is a few kilobytes from the same server).
// 2. A code block inside a collapsed block (pipeline/pages/page_weight.py: a whole listing, a helper,
//    a C program), and a chart, is a placeholder naming its file (data-deferred-src): fetched
//    and put in place as it comes near the screen (a code block: once its block is opened), a
//    code block with Material's copy button, which Material gives only to the blocks it finds
//    as the page loads. `beforeprint` loads them all.
(() => {
  const loaded = new Map();  // address -> Promise of its text
  const fetchText = (address) => {
    const url = new URL(address, location.href).href;
    if (!loaded.has(url)) {
      loaded.set(url, fetch(url).then((response) => {
        if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
        return response.text();
      }));
      loaded.get(url).catch(() => loaded.delete(url));  // a later attempt tries again
    }
    return loaded.get(url);
  };

  // 1. Programs to copy.
  const PROGRAM = "div.program[data-copy-src]";
  const program = (div) => div.dataset.copy !== undefined ? Promise.resolve()
    : fetchText(div.dataset.copySrc).then((text) => { div.dataset.copy = text; });
  const near = typeof IntersectionObserver === "function" && new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        near.unobserve(entry.target);
        program(entry.target).catch(() => {});
      }
    }, { rootMargin: "200px 0px" });
  for (const div of document.querySelectorAll(PROGRAM)) if (near) near.observe(div);
  const reached = (event) => {
    const div = event.target instanceof Element && event.target.closest(PROGRAM);
    if (div) program(div).catch(() => {});
  };
  for (const type of ["pointerover", "pointerdown", "focusin"])
    document.addEventListener(type, reached, { capture: true, passive: true });
  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element && event.target.closest("[data-clipboard-target]");
    const div = button && button.closest(PROGRAM);
    if (!div || div.dataset.copy !== undefined) return;
    event.stopImmediatePropagation();  // before Material's handler, on the document's body
    event.preventDefault();
    program(div).then(() => button.click(), (error) => console.warn(error));
  }, true);

  // 2. Code blocks shown only when opened.
  const config = document.getElementById("__config");
  const words = config ? JSON.parse(config.textContent).translations || {} : {};
  let made = 0;
  const withCopyButtons = (fragment) => {
    for (const code of fragment.querySelectorAll("pre > code")) {
      if (code.closest(".no-copy")) continue;
      const pre = code.parentElement;
      pre.id = pre.id || `__code_deferred_${made++}`;
      const nav = document.createElement("nav");
      nav.className = "md-code__nav";
      const button = document.createElement("button");
      button.className = "md-code__button";
      button.title = words["clipboard.copy"] || "Copy to clipboard";
      button.dataset.clipboardTarget = `#${pre.id} > code`;
      button.dataset.mdType = "copy";
      nav.append(button);
      pre.insertBefore(nav, code);
    }
    return fragment;
  };
  const show = (holder) => fetchText(holder.dataset.deferredSrc).then((text) => {
    const template = document.createElement("template");
    template.innerHTML = text;
    holder.replaceWith(withCopyButtons(template.content));
  });
  // A placeholder is loaded as it comes within a screen or two of the view; one inside a closed
  // block, or an unchosen tab, has no box and comes near only once it is shown.
  const nearing = typeof IntersectionObserver === "function" && new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        nearing.unobserve(entry.target);
        show(entry.target).catch((error) => console.warn(error));
      }
    }, { rootMargin: "1500px 0px" });
  const holders = document.querySelectorAll("[data-deferred-src]");
  for (const holder of holders) if (nearing) nearing.observe(holder);
  // Printing (and a browser without IntersectionObserver) gets every one.
  const all = () => Promise.all([...document.querySelectorAll("[data-deferred-src]")].map(
    (holder) => { if (nearing) nearing.unobserve(holder); return show(holder); }));
  window.addEventListener("beforeprint", () => { all().catch((error) => console.warn(error)); });
  if (!nearing) all().catch((error) => console.warn(error));
})();
