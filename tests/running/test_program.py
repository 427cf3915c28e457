"""pipeline/running/program.py: a snippet and its helpers as one program that runs alone.

Small files in a temporary snippets folder; each program is run with this Python in an empty
folder (milliseconds: no framework is imported), and what it prints is the judge.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.running import program, runner


def files(root: Path, sources: dict[str, str]) -> Path:
    for name, text in sources.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def run_alone(text: str, tmp: Path) -> str:
    folder = tmp / "empty"
    folder.mkdir()
    (folder / "prog.py").write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, "prog.py"], cwd=folder, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["prog.py"]  # needed nothing beside it
    return proc.stdout


SNIPPET = '''\
    """What the reader came for."""
    # snippet: timeout=30
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from _helper import greet, PUNCT as mark  # beside this file
    import tool

    # --8<-- [start:show]
    print(greet("reader") + mark, tool.twice(2), tool.NAME)
    # --8<-- [end:show]
    '''
HELPER = '''\
    """A helper beside the snippet.

    It says hello.
    """
    from __future__ import annotations

    PUNCT = "!"


    def greet(who: str) -> str:
        return f"hello {who}"


    if __name__ == "__main__":
        print("the helper's own command line")
    '''
TOOL = '''\
    """A helper at the root of snippets/, which needs another."""
    import _base

    NAME = "tool"


    def twice(x):
        return _base.double(x)
    '''
BASE = '''\
    def double(x):
        return 2 * x
    '''


SOURCES = {"topic/demo.py": SNIPPET, "topic/_helper.py": HELPER, "tool.py": TOOL, "_base.py": BASE}


def test_helpers_are_written_out_and_the_program_runs_alone(tmp_path):
    root = files(tmp_path / "snippets", SOURCES)
    made = program.build(root / "topic" / "demo.py", root)
    text = made.text
    assert run_alone(text, tmp_path) == "hello reader! 4 tool\n"
    lines = text.splitlines()
    assert lines[:2] == ['"""What the reader came for."""', "from __future__ import annotations"]
    assert "# snippet:" not in text and "--8<--" not in text and "sys.path" not in text
    assert "the helper's own command line" not in text  # a helper's __main__ block is not run
    assert "# It says hello." in lines  # a helper's docstring, as comments
    assert "mark = PUNCT" in lines and "tool = sys.modules[__name__]" in " ".join(lines)
    assert "_base = sys.modules[__name__]" in " ".join(lines)
    assert [h for h, _ in made.helpers] == ["_helper.py", "tool.py", "_base.py"]


def test_the_listing_keeps_the_imports_and_names_the_shown_lines(tmp_path):
    root = files(tmp_path / "snippets", SOURCES)
    made = program.build(root / "topic" / "demo.py", root)
    listing = made.listing.splitlines()
    assert "from _helper import greet, PUNCT as mark  # beside this file" in listing
    assert not any("sys.path" in line or "--8<--" in line or "# snippet:" in line
                   for line in listing)
    first, last = made.sections["show"]
    assert listing[first - 1:last] == [
        'print(greet("reader") + mark, tool.twice(2), tool.NAME)']


def test_a_name_two_files_define_stops_the_build_naming_both(tmp_path):
    root = files(tmp_path / "snippets", {"demo.py": "from _helper import greet\n"
                 "def greet(x):\n    return x\n", "_helper.py": HELPER})
    with pytest.raises(program.ProgramError, match=r"demo.py: `greet` .* also defined in "
                                                   r"_helper.py"):
        program.build(root / "demo.py", root)


def test_the_same_import_in_two_files_is_no_collision(tmp_path):
    root = files(tmp_path / "snippets", {
        "demo.py": "import os\nfrom _h import f\nprint(f(), os.sep)\n",
        "_h.py": "import os\ndef f():\n    return os.name\n"})
    assert run_alone(program.build(root / "demo.py", root).text, tmp_path).startswith("posix")


def test_a_helper_imported_inside_a_function_is_refused(tmp_path):
    root = files(tmp_path / "snippets", {"demo.py": "def f():\n    import _h\n",
                                         "_h.py": "X = 1\n"})
    with pytest.raises(program.ProgramError, match="top level"):
        program.build(root / "demo.py", root)


@pytest.mark.usefixtures("cpu_only")
def test_the_runner_runs_the_program_and_keeps_it_with_its_hash(mini):
    mini.snippet("t/demo.py", SNIPPET)
    mini.snippet("t/_helper.py", HELPER)
    mini.snippet("tool.py", TOOL)
    mini.snippet("_base.py", BASE)
    [o] = runner.run_all(runner.Project(mini.root), only=["t/demo.py"])
    assert (o.status, o.stdout) == ("ok", "hello reader! 4 tool\n"), o.stderr
    entry = Path(o.data_dir).parent
    ran = (entry / "demo.py").read_bytes()
    assert ran == program.build(mini.root / "snippets" / "t" / "demo.py",
                                mini.root / "snippets").text.encode()
    assert o.program_sha256 == program.sha256(ran)
    # A change to a helper makes another program: the snippet runs again.
    mini.snippet("_base.py", BASE.replace("2 * x", "3 * x"))
    [again] = runner.run_all(runner.Project(mini.root), only=["t/demo.py"])
    assert again.executed and again.stdout == "hello reader! 6 tool\n"


@pytest.mark.usefixtures("cpu_only")
def test_progress_names_each_snippet_as_it_starts_and_ends(mini):
    mini.snippet("a.py", "print('a')\n")
    mini.snippet("b.py", "# snippet: exclusive\nprint('b')\n")
    said: list[str] = []
    runner.run_all(runner.Project(mini.root), jobs=1, progress=said.append)
    assert said[0] == "snippets: 2 to run, 0 from the cache"
    assert said[1].startswith("snippets: [0/2] 0:0") and said[1].endswith("running a.py")
    assert said[2].startswith("snippets: [1/2] ") and said[2].endswith(" a.py")
    assert " ok (" in said[2] and said[-1].startswith("snippets: [2/2] ")
    said.clear()
    runner.run_all(runner.Project(mini.root), progress=said.append)
    assert said == []  # all from the cache: nothing to say
