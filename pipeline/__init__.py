"""The build, stage by stage. Imports run one way, from pages down to running:

    running/   snippets/ in, each snippet's run out (cached under .cache/)
    records/   a run on another machine in, results/ out (one format, with provenance)
    claims/    a page's prose and the records in, each claim checked and sentences written out
    pages/     docs/ and what the stages below give in, the site out (pages/hooks/: every hook)

`python -m pipeline.runner` (and .gpu_run, .add_records, .versions, .gpu_wheels): the commands
README names, each a line calling its stage's module.
"""
from __future__ import annotations

STAGES = ("running", "records", "claims", "pages")  # a stage imports only those before it
