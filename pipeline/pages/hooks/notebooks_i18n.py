"""Keeps mkdocs-jupyter's notebooks as pages when mkdocs-static-i18n is on.

mkdocs-jupyter marks each notebook it converts as a documentation page in `on_files`.
mkdocs-static-i18n (suffix mode) then rebuilds every file in its own `on_files`, which runs last
(priority -100), and a rebuilt `.ipynb` file is no longer a page: the notebook would be copied as
raw JSON to `notebooks/rnn-lstm/index.html`. This hook runs after i18n and marks those files as
pages again, so mkdocs-jupyter renders them and i18n's language switcher links them.
"""
from __future__ import annotations

from mkdocs.plugins import event_priority


@event_priority(-110)  # after mkdocs-static-i18n's on_files (-100)
def on_files(files, config):
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is None:
        return files
    notebooks = [file for file in files if jupyter.should_include(file)]
    for file in notebooks:
        if not file.is_documentation_page():
            file.is_documentation_page = lambda: True
    _add_missing_alternates(notebooks, config)
    i18n = config.plugins.get("i18n")
    if i18n is not None and notebooks:
        # i18n took its list of this language's pages (the sitemap's) in its own on_files,
        # before the notebooks above became pages: take it again so they are in the sitemap.
        i18n.i18n_files_per_language[i18n.current_language] = files.documentation_pages()
    return files


def _add_missing_alternates(notebooks, config):
    """i18n lists a page's versions in other languages (`file.alternates`, used by the language
    switcher and the sitemap) only for files it saw as pages, so the Spanish notebook had no
    English alternate and its switcher led to the home page. Add the missing ones."""
    i18n = config.plugins.get("i18n")
    if i18n is None or i18n.config.docs_structure != "suffix":
        return
    from pathlib import Path

    from mkdocs.structure.files import File
    from mkdocs_jupyter.plugin import NotebookFile
    from mkdocs_static_i18n.suffix import create_i18n_file

    for file in notebooks:
        alternates = getattr(file, "alternates", None)
        if alternates is None:
            continue
        for lang in i18n.build_languages:
            if lang in alternates:
                continue
            src = file.norm_src_uri
            if lang != i18n.default_language:
                src = src[: -len(".ipynb")] + f".{lang}.ipynb"
            if not (Path(config.docs_dir) / src).is_file():
                continue
            base = File(src, config.docs_dir, config.site_dir, config.use_directory_urls)
            page_file = NotebookFile(base, use_directory_urls=config.use_directory_urls,
                                     site_dir=config.site_dir)
            alternates[lang] = create_i18n_file(page_file, lang, i18n.default_language,
                                                i18n.all_languages, config)


@event_priority(10)  # before mkdocs-jupyter's on_post_build, which evicts unused cache files
def on_post_build(config):
    """Keep the execution cache of every notebook, in every language.

    i18n runs one build per language, and mkdocs-jupyter (0.26.3) evicts at the end of each build
    the cached results that build did not use: the English build evicts the Spanish notebook's
    result and the Spanish build the English one, so every build would execute both notebooks
    again. Here we mark the current result of every included notebook as used.
    """
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is None or not jupyter.config["cache"] or not hasattr(jupyter, "_used_cache_paths"):
        return
    from pathlib import Path

    from mkdocs_jupyter.plugin import _compute_cache_key, _get_cache_path

    docs = Path(config.docs_dir)
    for path in sorted(docs.rglob("*.ipynb")):
        if any(path.match(pattern) for pattern in jupyter.config["include"]):
            key = _compute_cache_key(str(path), jupyter.config, jupyter.config["execute"])
            jupyter._used_cache_paths.add(_get_cache_path(jupyter.config["cache_dir"], key))
