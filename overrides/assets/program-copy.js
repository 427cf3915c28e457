// A Python block's copy button copies its whole program (pipeline/page_programs.py). The page
// keeps each piece of its programs once, in the JSON of #program-parts (a helper that many
// programs carry, such as the checker, is there once); each program's div names its pieces in
// data-copy-parts. Joined here into the div's data-copy, which Material's copy button copies.
(() => {
  const store = document.getElementById("program-parts");
  if (!store) return;
  const pieces = JSON.parse(store.textContent);
  for (const div of document.querySelectorAll("[data-copy-parts]")) {
    const parts = div.dataset.copyParts.split(" ").map(key => pieces[key]);
    if (parts.every(part => typeof part === "string")) div.dataset.copy = parts.join("");
  }
})();
