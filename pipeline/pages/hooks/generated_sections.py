"""Sections of a page drawn from an installed library at build time, before the site's own checks.

  <!-- cudnn-status: FAMILY -->   the installed cuDNN's status codes of that family, read from its
                                  header, with the site's advice (pipeline/claims/cudnn_status.py,
                                  data/cudnn_status.yml)
  <!-- library-messages: LIBRARY --> every message the recurrent-layer code of the installed
                                  library can raise or warn, with the site's row for it
                                  (pipeline/claims/library_messages.py, data/library_messages.yml)
  <!-- kernel-messages: LIBRARY --> the messages of that library's compiled RNN kernels, read
                                  from its shared objects by hand, with the site's row for each
                                  (pipeline/claims/kernel_messages.py, data/kernel_messages.yml)
  <!-- release-changes: LIBRARY --> every change to that library's recurrent-layer code between
                                  consecutive releases, read from the published wheels, with what
                                  a reader saw before it (pipeline/claims/release_changes.py,
                                  data/release_changes.yml, data/release_files.yml)
  <!-- keras-migration -->         what differs between tf-keras and Keras 3 in the recurrent
                                  layers, asked of both installed packages, with what to do
                                  (pipeline/claims/keras_migration.py, data/keras_migration.yml)

This hook runs before pipeline/pages/hooks/build.py (mkdocs.yml lists it first), so what it draws is
checked like the rest of the page (release numbers, quotations). `mkdocs build` fails on a
problem (a code of the header the data lacks, a message of a library the data lacks, or the
reverse); `mkdocs serve` logs it.
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

# MkDocs loads a hook as a lone file: make the `pipeline` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from pipeline.claims import (cudnn_status, kernel_messages, keras_migration,  # noqa: E402
                             library_messages, release_changes)

log = logging.getLogger("mkdocs.hooks.generated_sections")
# Each kind of section: its module (render(markdown, lang, root) -> (markdown, problems)) and the
# error it raises on a marker it cannot draw.
_SECTIONS = ((cudnn_status, cudnn_status.StatusError),
             (library_messages, library_messages.LibraryMessagesError),
             (kernel_messages, kernel_messages.KernelMessagesError),
             (keras_migration, keras_migration.KerasMigrationError),
             (release_changes, release_changes.ReleaseChangesError))
_state = {"command": "build"}


def on_startup(command, dirty):
    _state["command"] = command


def on_page_markdown(markdown, page, config, files):
    lang = ((config.get("extra") or {}).get("pipeline_text") or {}).get("language", "en")
    root = Path(config["config_file_path"]).resolve().parent
    problems = []
    for section, error in _SECTIONS:
        try:
            markdown, found = section.render(markdown, lang, root)
        except error as e:
            found = [str(e)]
        problems += found
    if problems:
        message = "\n".join(f"{page.file.src_uri}: {p}" for p in problems)
        if _state["command"] == "serve":
            log.error(message)
        else:
            raise PluginError(message)
    return markdown
