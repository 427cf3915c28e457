"""pipeline/ is one tree of stage folders (pipeline/__init__.py): a module imports its own stage
and the stages before it, never a later one, so a record reaches a page by one path:
running -> records -> claims -> pages. Read from each module's imports (its source, parsed)."""
from __future__ import annotations

import ast

from conftest import REPO
from pipeline import STAGES

PIPELINE = REPO / "pipeline"


def imported_stages(path) -> set[str]:
    """The stages a module's imports name (`from pipeline.claims import ...`, `import
    pipeline.records.store`), wherever in the module they are."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 \
            else [a.name for a in node.names] if isinstance(node, ast.Import) else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "pipeline" and len(parts) > 1 and parts[1] in STAGES:
                found.add(parts[1])
    return found


def test_every_module_sits_in_a_stage_and_imports_no_later_one():
    problems, modules = [], 0
    for path in sorted(PIPELINE.rglob("*.py")):
        rel = path.relative_to(PIPELINE)
        if len(rel.parts) == 1:  # pipeline/__init__.py and the commands README names
            continue
        stage = rel.parts[0]
        assert stage in STAGES, f"{rel}: not in a stage folder {STAGES}"
        modules += 1
        later = {s for s in imported_stages(path) if STAGES.index(s) > STAGES.index(stage)}
        if later:
            problems.append(f"{rel} imports the later stage(s) {sorted(later)}")
    assert modules >= 40, modules
    assert not problems, "\n".join(problems)


def test_no_module_reaches_another_by_a_relative_import():
    """Every import of the pipeline names its stage: `from . import x` would hide which."""
    relative = [str(p.relative_to(REPO)) for p in PIPELINE.rglob("*.py")
                if any(isinstance(n, ast.ImportFrom) and n.level
                       for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    assert not relative, relative


def test_the_commands_readme_names_each_call_their_stage_alone():
    for path in sorted(PIPELINE.glob("*.py")):
        if path.name == "__init__.py":
            continue
        assert imported_stages(path) and len(imported_stages(path)) == 1, path.name


def test_the_check_fails_on_a_module_that_imports_a_later_stage(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("from pipeline.pages import charts\nimport pipeline.claims.prose\n")
    assert imported_stages(planted) == {"pages", "claims"}
