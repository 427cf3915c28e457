"""The site's root 404 page in the default language (English).

mkdocs-static-i18n builds every language into the same site_dir, and each language's pass writes
the theme's 404.html at the root: the last language built (Spanish) left its own there, so a
reader who mistyped an English address got a Spanish page. A host serves one 404 page for the
whole site, the root one: this hook keeps the default language's, which i18n renders first, and
gives it to the other languages' passes to write.
"""
from __future__ import annotations

_default_page: dict[str, str] = {}  # site_dir -> the default language's rendered 404.html


def on_post_template(output: str, template_name: str, config) -> str:
    i18n = config.plugins.get("i18n")
    if template_name != "404.html" or i18n is None:
        return output
    if i18n.is_default_language_build:
        _default_page[config.site_dir] = output
        return output
    return _default_page.get(config.site_dir, output)
