"""The runner: one process per snippet, timeout, cache keyed by what decides the result,
stored only on success, failures reported together at the end."""
from __future__ import annotations

import json
import time

import pytest

from pipeline.running import runner
from pipeline.running.snippets import DEFAULT_TIMEOUT, discover, parse_header, SnippetError

pytestmark = pytest.mark.usefixtures("cpu_only")


def run(mini, **kw):
    return {o.snippet.rel: o for o in runner.run_all(runner.Project(mini.root), **kw)}


def test_header_options_are_read_and_bad_ones_rejected():
    assert parse_header("# snippet: timeout=12 needs=gpu exclusive\n", "a.py") == {
        "timeout": 12.0, "needs_gpu": True, "exclusive": True, "matrix": False,
        "fresh": False}
    assert parse_header("# snippet: matrix\n", "a.py")["matrix"] is True
    assert parse_header("print(1)\n", "a.py")["timeout"] == DEFAULT_TIMEOUT
    for bad in ("# snippet: timeout=soon", "# snippet: timeout=-1", "# snippet: gpu"):
        with pytest.raises(SnippetError):
            parse_header(bad, "a.py")


def test_the_build_leaves_matrix_snippets_to_the_version_matrix(mini):
    mini.snippet("t/page.py", "print('shown')\n")
    mini.snippet("v/cell.py", "# snippet: matrix\nprint('in a release environment')\n")
    assert set(run(mini)) == {"t/page.py"}
    assert run(mini, only=["v/cell.py"])["v/cell.py"].stdout == "in a release environment\n"


def test_helpers_are_found_and_underscore_files_are_not_snippets(mini):
    mini.snippet("t/_helper.py", "import _deeper\nVALUE = 1\n")
    mini.snippet("t/_deeper.py", "X = 2\n")
    mini.snippet("t/main.py", "import json\nimport _helper\nprint(_helper.VALUE)\n")
    found = discover(mini.root / "snippets")
    assert [s.rel for s in found] == ["t/main.py"]
    assert [h.name for h in found[0].helpers] == ["_deeper.py", "_helper.py"]


def test_modules_from_the_snippets_root_are_helpers_too(mini):
    mini.snippet("checker.py", "RULE = 1\n")
    mini.snippet("t/uses.py", "import sys, pathlib\n"
                 "sys.path.insert(0, str(pathlib.Path(__file__).parent.parent))\n"
                 "import checker\nprint(checker.RULE)\n")
    run(mini)
    mini.snippet("checker.py", "RULE = 2\n")
    after = run(mini)
    assert after["t/uses.py"].executed and after["t/uses.py"].stdout == "2\n"


def test_output_is_captured_and_cached(mini):
    mini.snippet("a.py", "print('hello from a')\n")
    first = run(mini)["a.py"]
    assert (first.status, first.executed, first.stdout) == ("ok", True, "hello from a\n")
    second = run(mini)["a.py"]
    assert (second.status, second.executed, second.stdout) == ("ok", False, "hello from a\n")


def test_changing_snippet_helper_or_requirements_reruns_only_what_depends_on_it(mini):
    mini.snippet("t/_helper.py", "VALUE = 1\n")
    mini.snippet("t/uses.py", "import _helper\nprint(_helper.VALUE)\n")
    mini.snippet("t/plain.py", "print('plain')\n")
    mini.snippet("other.py", "print('other')\n")
    run(mini)
    mini.snippet("t/_helper.py", "VALUE = 2\n")
    after = run(mini)
    assert {r for r, o in after.items() if o.executed} == {"t/uses.py"}
    assert after["t/uses.py"].stdout == "2\n"
    mini.snippet("other.py", "print('other, edited')\n")
    assert {r for r, o in run(mini).items() if o.executed} == {"other.py"}
    (mini.root / "requirements.txt").write_text("nothing==2\n")
    assert all(o.executed for o in run(mini).values())


def test_benchmark_size_variables_are_part_of_the_key(mini, monkeypatch):
    mini.snippet("sized.py", "import os\nprint(os.environ.get('BENCH_SCALE', '1'))\n")
    assert run(mini)["sized.py"].stdout == "1\n"
    monkeypatch.setenv("BENCH_SCALE", "4")
    scaled = run(mini)["sized.py"]
    assert scaled.executed and scaled.stdout == "4\n"
    monkeypatch.delenv("BENCH_SCALE")
    assert not run(mini)["sized.py"].executed  # the scale-1 result is still cached


def test_failure_does_not_hide_others_and_is_not_cached(mini):
    mini.snippet("bad.py", "import sys\nprint('to stderr', file=sys.stderr)\nraise SystemExit(3)\n")
    mini.snippet("good.py", "print('fine')\n")
    out = run(mini)
    assert out["good.py"].status == "ok"
    assert (out["bad.py"].status, out["bad.py"].returncode) == ("failed", 3)
    err = runner.RunFailed(runner.failures(list(out.values())))
    assert "bad.py: exit status 3" in str(err) and "to stderr" in str(err)
    assert "good.py" not in str(err)
    again = run(mini)
    assert again["bad.py"].executed and not again["good.py"].executed


def test_hanging_snippet_is_killed_at_its_timeout(mini):
    mini.snippet("hang.py", "# snippet: timeout=1\nimport time\nprint('started', flush=True)\n"
                            "time.sleep(600)\n")
    start = time.monotonic()
    o = run(mini)["hang.py"]
    assert time.monotonic() - start < 30
    assert o.status == "timeout" and "1 s timeout" in o.problem and o.stdout == "started\n"


def test_gpu_snippet_without_gpu_is_needs_gpu_and_wrong_exits_fail(mini, monkeypatch):
    gpu_code = ("# snippet: needs=gpu\nimport sys\nprint('needs a GPU: no CUDA device')\n"
                "sys.exit(77)\n")
    mini.snippet("gpu.py", gpu_code)
    mini.snippet("undeclared.py", "import sys\nsys.exit(77)\n")
    mini.snippet("silent.py", "# snippet: needs=gpu\nprint('pretending')\n")
    out = run(mini)
    assert out["gpu.py"].status == "needs-gpu"
    assert "does not declare" in out["undeclared.py"].problem
    assert out["silent.py"].status == "failed" and "must exit 77" in out["silent.py"].problem
    # The same snippet on a GPU machine that still finds no GPU: a loud failure.
    from pipeline.running import device
    monkeypatch.setenv("SNIPPETS_DEVICE", "GPU: Test Card")
    device.device_kind.cache_clear()
    on_gpu = run(mini)["gpu.py"]
    assert on_gpu.status == "failed" and "on a GPU machine" in on_gpu.problem


def test_huge_and_non_utf8_output_is_capped_and_decoded(mini):
    mini.snippet("loud.py", "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe' + b'x' * 3_000_000)\n")
    o = run(mini)["loud.py"]
    assert o.status == "ok" and "\ufffd" in o.stdout
    assert len(o.stdout) < runner.OUTPUT_CAP + 200 and "output truncated" in o.stdout


def test_data_files_are_kept_with_the_result(mini):
    mini.snippet("data.py", "import os, pathlib\n"
                 "pathlib.Path(os.environ['SNIPPET_DATA_DIR'], 'x.json').write_text('[1]')\n")
    first = run(mini)["data.py"]
    second = run(mini)["data.py"]
    assert not second.executed and second.data_dir == first.data_dir
    assert json.loads((runner.Path(second.data_dir) / "x.json").read_text()) == [1]


def test_damaged_cache_entry_is_rerun_not_trusted(mini):
    mini.snippet("data.py", "import os, pathlib\n"
                 "pathlib.Path(os.environ['SNIPPET_DATA_DIR'], 'x.json').write_text('[1]')\n"
                 "print('ran')\n")
    o = run(mini)["data.py"]
    (runner.Path(o.data_dir) / "x.json").write_text("[2]")  # tampered data
    assert run(mini)["data.py"].executed
    entry = runner.Path(run(mini)["data.py"].data_dir).parent
    (entry / "result.json").write_text("{not json")  # truncated result
    assert run(mini)["data.py"].executed


def test_no_execute_reports_not_run_without_running(mini):
    mini.snippet("a.py", "print('x')\n")
    o = run(mini, execute_stale=False)["a.py"]
    assert o.status == "not-run" and not o.executed
    assert not (mini.root / ".cache" / "runs").exists() or not any((mini.root / ".cache" / "runs").iterdir())


def test_execution_times_table_is_written(mini):
    mini.snippet("a.py", "print('x')\n")
    run(mini)
    rows = json.loads((mini.root / ".cache" / "execution-times.json").read_text())
    assert rows[0]["snippet"] == "a.py" and rows[0]["status"] == "ok" and rows[0]["executed"]


# A snippet that dies importing a framework this machine lacks: the import machinery is told
# that the module does not exist, so the process ends exactly as on a machine without it.
MISSING = """\
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == {module!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Missing())
import {module}
"""


@pytest.mark.parametrize("module, says", [("tensorflow", "needs TensorFlow"),
                                          ("tf_keras", "needs tf-keras"), ("jax", "needs JAX"),
                                          ("torch", "needs PyTorch"), ("keras", "needs Keras")])
def test_a_missing_framework_is_a_skip_in_a_gpu_run_and_a_failure_otherwise(mini, module, says):
    mini.snippet("fw.py", MISSING.format(module=module))
    o = run(mini)["fw.py"]
    assert (o.status, o.problem) == ("failed", "exit status 1")
    assert o.stderr.strip().endswith(f"ModuleNotFoundError: No module named '{module}'")
    skipped = run(mini, skip_missing=True)["fw.py"]
    assert (skipped.status, skipped.problem, skipped.executed) == ("skipped", says, True)
    assert runner.failures([skipped]) == []
    assert run(mini, skip_missing=True)["fw.py"].executed  # a skip is never cached


def test_other_import_errors_and_caught_ones_still_fail_in_a_gpu_run(mini):
    mini.snippet("helper_missing.py", MISSING.format(module="my_own_helper"))
    # It survived the missing import and failed later, for another reason.
    mini.snippet("caught.py", "\n".join(MISSING.format(module="tensorflow").splitlines()[:-1])
                 + "\ntry:\n    import tensorflow\nexcept ImportError as e:\n"
                 "    print(e, file=sys.stderr)\nraise SystemExit(3)\n")
    mini.snippet("broken_install.py", "raise ImportError('libcudnn.so.9: cannot open shared "
                 "object file')\n")
    out = run(mini, skip_missing=True)
    assert {rel: o.status for rel, o in out.items()} == {
        "helper_missing.py": "failed", "caught.py": "failed", "broken_install.py": "failed"}


def test_missing_framework_reads_only_the_last_line():
    tail = "Traceback (most recent call last):\n  ...\nModuleNotFoundError: No module named 'jax.numpy'\n"
    assert runner.missing_framework(tail) == "JAX"
    assert runner.missing_framework(tail + "During handling...\nValueError: x\n") is None
    assert runner.missing_framework("") is None


def test_each_outcome_is_reported_as_soon_as_it_is_known(mini):
    mini.snippet("a.py", "print('a')\n")
    mini.snippet("b.py", "# snippet: exclusive\nprint('b')\n")
    seen = []
    ordered = runner.run_all(runner.Project(mini.root),
                             on_done=lambda o: seen.append((o.snippet.rel, o.executed)))
    assert seen == [("a.py", True), ("b.py", True)]  # the exclusive one runs after the others
    assert [o.snippet.rel for o in ordered] == ["a.py", "b.py"]
    seen.clear()
    runner.run_all(runner.Project(mini.root),
                   on_done=lambda o: seen.append((o.snippet.rel, o.executed)))
    assert sorted(seen) == [("a.py", False), ("b.py", False)]


def test_a_gpu_benchmark_without_a_gpu_does_not_wait_to_run_alone(mini, cpu_only):
    """`exclusive` keeps a measurement alone on the CPU. Without a GPU a GPU benchmark measures
    nothing (it exits 77 at once): it runs beside the others, not after them."""
    mini.snippet("a.py", "import time\ntime.sleep(2)\nprint('a')\n")
    mini.snippet("b.py", "# snippet: exclusive\nprint('b')\n")
    mini.snippet("gpu.py", "# snippet: needs=gpu exclusive\nraise SystemExit(77)\n")
    seen = []
    runner.run_all(runner.Project(mini.root), jobs=2, on_done=lambda o: seen.append(o.snippet.rel))
    assert seen == ["gpu.py", "a.py", "b.py"]  # gpu.py beside a.py; b.py alone, after both


def test_a_snippet_edited_after_the_run_began_is_not_filed_under_its_old_text(mini):
    """A writer edits a snippet while the run it belongs to goes on (make serve runs the stale
    snippets in the background): the run found the old text stale, and runs the file as it is
    when its turn comes. That program's result must not be filed under the old text's key, or
    going back to the old text would show the other program's output as its own."""
    import threading
    mini.snippet("a/first.py", "import time\ntime.sleep(1.5)\nprint('first')\n")
    path = mini.snippet("b/second.py", "print('old text')\n")
    edit = threading.Timer(0.5, lambda: path.write_text("print('new text')\n"))
    edit.start()
    try:  # one at a time: b/second.py starts once a/first.py is done, after the edit
        during = run(mini, jobs=1)["b/second.py"]
    finally:
        edit.join()
    assert during.executed and during.stdout == "new text\n"
    path.write_text("print('old text')\n")
    back = run(mini)["b/second.py"]
    assert back.executed and back.stdout == "old text\n", \
        "the new text's output was filed under the old text"
    assert not run(mini)["b/second.py"].executed  # the old text's own result, now stored
