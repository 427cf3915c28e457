"""docs/troubleshooting/runtime.md#cudnn-status-codes: every cuDNN status code of the installed cuDNN is
on the page, in both languages, with the site's advice (data/cudnn_status.yml).

The codes are read from the installed header at build time (pipeline/claims/cudnn_status.py), so the
page cannot lack one; what can go wrong is the data: a code of the header it lacks, or a code it
names that the header does not have. Both fail here, read with a parser of this test's own, and
fail the build (the planted header and data below). The facts the advice states about the
installed libraries are checked too, and a pasted status name finds its family's section.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from chromium import first_three
from conftest import REPO, TROUBLESHOOTING, printed
from pipeline.claims import cudnn_status

DATA = REPO / "data" / "cudnn_status.yml"
PAGES = TROUBLESHOOTING  # every troubleshooting page of a language, read as one (conftest.py)
SNIPPET = "troubleshooting/cudnn_status_codes.py"
ANCHORS = {"0": "cudnn-status-success", "1000": "cudnn-status-library",
           "2000": "cudnn-status-bad-param", "3000": "cudnn-status-not-supported",
           "4000": "cudnn-status-internal-error", "5000": "cudnn-status-execution-failed",
           "deprecated": "cudnn-status-deprecated"}


def _folder(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec.origin and spec.origin.endswith("__init__.py"):
        return Path(spec.origin).parent
    return Path(list(spec.submodule_search_locations)[0])


CUDNN = _folder("nvidia.cudnn")
HEADER = CUDNN / "include" / "cudnn_graph.h"


def header_names(text: str) -> list[str]:
    """The names of the cudnnStatus_t enum, by this test's own reading: every CUDNN_STATUS_ name
    followed by `=` (a deprecated one with CUDNN_DEPRECATED_ENUM between) in the enum's body."""
    body = text[text.index("typedef enum"):]
    body = body[:body.index("cudnnStatus_t;")]
    body = body[body.rindex("typedef enum"):]
    return re.findall(r"\b(CUDNN_STATUS_\w+)\s*(?:CUDNN_DEPRECATED_ENUM\s*)?=", body)


def test_the_data_names_exactly_the_codes_of_the_installed_header():
    names = header_names(HEADER.read_text(encoding="utf-8"))
    assert len(names) >= 50 and "CUDNN_STATUS_BAD_PARAM" in names, names
    listed = list(yaml.safe_load(DATA.read_text(encoding="utf-8"))["codes"])
    missing = [n for n in names if n not in listed]
    extra = [n for n in listed if n not in names]
    assert not missing, f"the installed cuDNN's header has {missing}: add them to {DATA.name}"
    assert not extra, f"{DATA.name} names {extra}, which the installed cuDNN's header lacks"
    # the site's reader agrees with this one, value and all
    statuses = cudnn_status.read_header(HEADER)
    assert [s.name for s in statuses] == names
    assert cudnn_status.problems(statuses, cudnn_status.load_data(DATA)) == []


def test_a_code_the_data_lacks_or_invents_is_a_problem(tmp_path):
    """A planted header with a new code, and data with a code no header has."""
    text = HEADER.read_text(encoding="utf-8").replace(
        "CUDNN_STATUS_EXECUTION_FAILED_CURAND      = 5004,",
        "CUDNN_STATUS_EXECUTION_FAILED_CURAND      = 5004, /**< x */\n"
        "    CUDNN_STATUS_EXECUTION_FAILED_NEW = 5005,")
    assert "CUDNN_STATUS_EXECUTION_FAILED_NEW" in text
    planted = tmp_path / "cudnn_graph.h"
    planted.write_text(text, encoding="utf-8")
    data = cudnn_status.load_data(DATA)
    found = cudnn_status.problems(cudnn_status.read_header(planted), data)
    assert any("lacks CUDNN_STATUS_EXECUTION_FAILED_NEW" in p for p in found), found
    data["codes"]["CUDNN_STATUS_NOT_A_CODE"] = None
    found = cudnn_status.problems(cudnn_status.read_header(HEADER), data)
    assert any("names CUDNN_STATUS_NOT_A_CODE" in p for p in found), found


def test_the_build_stops_on_a_problem(tmp_path, monkeypatch):
    """render() returns the problem; pipeline/pages/hooks/generated_sections.py fails a build on any."""
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    del data["codes"]["CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH"]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "cudnn_status.yml").write_text(yaml.safe_dump(data), encoding="utf-8")
    _, found = cudnn_status.render("<!-- cudnn-status: 2000 -->", "en", tmp_path)
    assert found and "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH" in found[0]
    hook = (REPO / "pipeline" / "pages" / "hooks" / "generated_sections.py").read_text(encoding="utf-8")
    assert "raise PluginError" in hook
    # it runs before the site's own checks, so what it draws is checked like the rest
    hooks = re.findall(r"^\s+- (\S+)", (REPO / "mkdocs.yml").read_text().split("hooks:")[1]
                       .split("\n\n")[0], re.M)
    assert hooks.index("pipeline/pages/hooks/generated_sections.py") < hooks.index("pipeline/pages/hooks/build.py")


def test_both_languages_draw_every_family_once_under_its_heading():
    for lang, page in PAGES.items():
        text = page.read_text(encoding="utf-8")
        markers = cudnn_status.MARKER.findall(text)
        assert markers == list(cudnn_status.FAMILIES), (lang, markers)
        for family, anchor in ANCHORS.items():
            at = text.index(f"<!-- cudnn-status: {family} -->")
            heading = text[:at].rstrip().splitlines()[-1]
            assert heading.startswith("### ") and heading.endswith(f"{{ #{anchor} }}"), \
                (lang, heading)


def test_every_code_is_on_the_built_page_in_its_family_in_both_languages(site):
    statuses = cudnn_status.read_header(HEADER)
    for lang, page in (("en", site / "troubleshooting" / "runtime" / "index.html"),
                       ("es", site / "es" / "troubleshooting" / "runtime" / "index.html")):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for s in statuses:
            heading = soup.find(id=ANCHORS[s.family])
            listing = heading.find_next_sibling("ul")
            items = [li.get_text(" ") for li in listing.find_all("li", recursive=False)]
            (item,) = [i for i in items if i.split()[0] == s.name]
            assert f"{s.value}" in item, (lang, s.name)
            described = cudnn_status.DEPRECATED.sub("", s.description).strip()
            assert " ".join(described.split()) in " ".join(item.split()), (lang, s.name)


def test_the_program_names_every_value_as_the_header_does():
    """Its output: each code once with its value and description, every deprecated name."""
    lines = printed(SNIPPET).splitlines()
    for s in cudnn_status.read_header(HEADER):
        if s.alias_of:
            assert any(line.split()[:2] == [str(s.value), s.name] for line in lines), s.name
        else:
            assert any(line.split()[:2] == [str(s.value), s.name]
                       and line.endswith(s.description) for line in lines), s.name
    assert lines[-1].endswith("CUDNN_UNKNOWN_STATUS")


def test_the_facts_the_advice_states_about_the_installed_libraries():
    """The RNN functions are in libcudnn_adv.so.9 (and declared in cudnn_adv.h), next to the
    other sub-libraries; PyTorch's CUDA library imports cudnnRNNForward, the two backward
    functions and cudnnGetErrorString."""
    lib = CUDNN / "lib"
    assert {"libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_adv.so.9"} <= \
        {p.name for p in lib.iterdir()}
    assert b"cudnnRNNForward" in (lib / "libcudnn_adv.so.9").read_bytes()
    assert re.search(r"cudnnRNNForward\(", (CUDNN / "include" / "cudnn_adv.h").read_text())
    torch_cuda = (_folder("torch") / "lib" / "libtorch_cuda.so").read_bytes()
    for name in (b"cudnnRNNForward", b"cudnnRNNBackwardData_v8", b"cudnnRNNBackwardWeights_v8",
                 b"cudnnGetErrorString"):
        assert name in torch_cuda, name
    # cudnnAdvVersionCheck's documentation: each sub-library checks its dependencies' version
    assert "checks whether its own version matches that of its dependencies" in \
        (CUDNN / "include" / "cudnn_adv.h").read_text()


# cudnnStatus_t of cuDNN 8 (cudnn_ops_infer.h, values 0 to 14): names older than cuDNN 9.
CUDNN8_NAMES = {f"CUDNN_STATUS_{n}" for n in (
    "SUCCESS", "NOT_INITIALIZED", "ALLOC_FAILED", "BAD_PARAM", "INTERNAL_ERROR", "INVALID_VALUE",
    "ARCH_MISMATCH", "MAPPING_ERROR", "EXECUTION_FAILED", "NOT_SUPPORTED", "LICENSE_ERROR",
    "RUNTIME_PREREQUISITE_MISSING", "RUNTIME_IN_PROGRESS", "RUNTIME_FP_OVERFLOW",
    "VERSION_MISMATCH")}


def test_tensorflow_names_statuses_from_a_table_of_its_own():
    """What the page says of TensorFlow's log lines: the installed TensorFlow's library holds
    the old names and the words it writes for a value its table lacks, and none of the sub-code
    names cuDNN 9's header adds (a name PyTorch would print for the same value)."""
    tf_lib = (_folder("tensorflow") / "libtensorflow_framework.so.2").read_bytes()
    assert b"<unknown cudnn status: " in tf_lib
    assert b"CUDNN_STATUS_ALLOC_FAILED" in tf_lib and b"CUDNN_STATUS_MAPPING_ERROR" in tf_lib
    sub_codes = [s.name for s in cudnn_status.read_header(HEADER)
                 if s.value % 1000 and not s.alias_of and s.name not in CUDNN8_NAMES]
    assert len(sub_codes) >= 30, sub_codes
    held = [name for name in sub_codes if name.encode() in tf_lib]
    assert not held, f"TensorFlow's library names cuDNN 9 sub-codes: {held}"


# --- a pasted status finds its family --------------------------------------------------------




@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_pasted_status_lists_its_section_in_the_first_three_results(browser, server, lang):
    """Through the site's own search worker: the name alone, and as PyTorch writes it; the page
    among the first three results, and the section of its family among that page's sections."""
    if isinstance(browser, str):
        pytest.fail(browser, pytrace=False)
    statuses = cudnn_status.read_header(HEADER)
    queries = [q for s in statuses for q in (s.name, f"RuntimeError: cuDNN error: {s.name}")]
    answers = first_three(browser, server, lang, queries)
    problems = []
    for query, items in zip(queries, answers):
        name = query.split()[-1]
        family = next(s.family for s in statuses if s.name == name)
        locations = [loc for item in items for loc in item]
        if not any(f"troubleshooting/runtime/#{ANCHORS[family]}" in loc for loc in locations):
            problems.append(f"{query!r}: {locations[:6]}")
    assert not problems, f"{lang}: {len(problems)} of {len(queries)}: {problems[:5]}"
