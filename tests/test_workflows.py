"""The GitHub workflows: actionlint-clean, least privilege, pinned actions, and the GPU runner
never reached by code from forks or pull requests."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
SHA = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def load(path: Path) -> dict:
    wf = yaml.safe_load(path.read_text())
    wf["on"] = wf.pop(True, wf.get("on"))  # YAML 1.1 reads the key `on` as True
    return wf


def triggers(wf: dict) -> set[str]:
    on = wf["on"]
    return {on} if isinstance(on, str) else set(on)


def test_there_is_a_cpu_and_a_gpu_workflow():
    names = {p.name for p in WORKFLOWS}
    assert {"cpu.yml", "gpu.yml"} <= names


def test_actionlint_is_clean():
    exe = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    assert exe, "actionlint is not installed (requirements-test.txt)"
    proc = subprocess.run([exe, "-no-color", *map(str, WORKFLOWS)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_least_privilege_and_pinned_actions(path):
    wf = load(path)
    assert wf.get("permissions") == {}, "top level grants nothing; jobs ask for what they need"
    assert "concurrency" in wf
    for name, job in wf["jobs"].items():
        assert "permissions" in job, f"job {name} must state its permissions"
        for perm, level in job["permissions"].items():
            assert level in ("read", "write", "none"), (name, perm)
            if level == "write":
                assert perm in ("pages", "id-token"), f"job {name} writes {perm}"
        for step in job.get("steps", []):
            if "uses" in step:
                assert SHA.match(step["uses"]), f"{name}: {step['uses']} is not pinned to a SHA"
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False


def test_gpu_workflow_never_runs_untrusted_code_on_the_self_hosted_runner():
    wf = load(REPO / ".github" / "workflows" / "gpu.yml")
    assert triggers(wf) == {"push", "schedule", "workflow_dispatch"}
    assert wf["on"]["push"]["branches"] == ["main"]
    self_hosted = {n: j for n, j in wf["jobs"].items() if "self-hosted" in j["runs-on"]}
    assert self_hosted, "the GPU job runs on the self-hosted GPU runner"
    for name, job in self_hosted.items():
        assert "gpu" in job["runs-on"]
        assert "github.repository ==" in job["if"] and "pull_request" in job["if"]
        assert job["permissions"] == {"contents": "read"}
        runs = [step.get("run", "") for step in job["steps"]]
        assert "make gpu-run" in runs  # every snippet and GPU test, recorded under results/
        upload = [step for step in job["steps"] if step.get("with", {}).get("path") == "results/"]
        assert upload, "the GPU run's records are kept as an artifact"


def test_cpu_workflow_runs_the_readme_test_command():
    wf = load(REPO / ".github" / "workflows" / "cpu.yml")
    assert {"pull_request", "push"} <= triggers(wf)
    runs = [s.get("run", "") for j in wf["jobs"].values() for s in j["steps"]]
    readme = (REPO / "README.md").read_text()
    assert "make test" in runs and "make test" in readme
    assert "make build" in runs
