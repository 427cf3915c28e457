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
CREATE_PR = "peter-evans/create-pull-request@"
# The only writes a job may ask for: Pages' deployment, and the records' pull request (that job
# alone, below).
PR_PERMISSIONS = {"contents": "write", "pull-requests": "write"}


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
            if level == "write" and job["permissions"] != PR_PERMISSIONS:
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


def test_every_action_is_pinned_with_its_version_in_a_comment():
    for path in WORKFLOWS:
        for line in path.read_text().splitlines():
            if re.match(r"\s*(- )?uses:", line):
                assert re.search(r"uses: \S+@[0-9a-f]{40} # v\d+(\.\d+)*\s*$", line), \
                    f"{path.name}: {line.strip()}"


def _steps_using(job: dict, action: str) -> list[dict]:
    return [s for s in job.get("steps", []) if s.get("uses", "").startswith(action)]


def test_gpu_ci_opens_a_pull_request_with_its_records_from_a_job_that_alone_may_write():
    wf = load(REPO / ".github" / "workflows" / "gpu.yml")
    jobs = wf["jobs"]
    (name,) = [n for n, j in jobs.items() if _steps_using(j, CREATE_PR)]
    job = jobs[name]
    (step,) = _steps_using(job, CREATE_PR)
    assert SHA.match(step["uses"])
    # Least permissions: exactly what creating a branch and a pull request takes, on this job
    # only; nothing at the top; no other job of any workflow writes the repository or its PRs.
    assert job["permissions"] == PR_PERMISSIONS and wf["permissions"] == {}
    for path in WORKFLOWS:
        for other_name, other in load(path)["jobs"].items():
            if (path.name, other_name) != ("gpu.yml", name):
                perms = other.get("permissions", {})
                assert perms.get("contents") != "write", (path.name, other_name)
                assert perms.get("pull-requests") != "write", (path.name, other_name)
    # It runs after the GPU run, on a GitHub-hosted runner (the self-hosted GPU runner never
    # holds a token that writes), only in this repository and only for main.
    assert job["needs"] == "gpu" and "self-hosted" not in job["runs-on"]
    assert "github.repository == 'cudnn-rnn-guide/cudnn-rnn-guide'" in job["if"]
    assert "github.ref == 'refs/heads/main'" in job["if"]
    # The records it commits are those the GPU job uploaded, put back under results/.
    (download,) = _steps_using(job, "actions/download-artifact@")
    upload = [s for s in jobs["gpu"]["steps"] if s.get("with", {}).get("path") == "results/"]
    assert download["with"] == {"name": upload[0]["with"]["name"], "path": "results/"}
    assert step["with"]["add-paths"] == "results/" and step["with"]["branch"]
    checkout = _steps_using(job, "actions/checkout@")
    assert checkout and checkout[0]["with"]["persist-credentials"] is False


def test_cpu_workflow_runs_the_readme_test_command():
    wf = load(REPO / ".github" / "workflows" / "cpu.yml")
    assert {"pull_request", "push"} <= triggers(wf)
    runs = [s.get("run", "") for j in wf["jobs"].values() for s in j["steps"]]
    readme = (REPO / "README.md").read_text()
    assert "make test" in runs and "make test" in readme
    assert "make build" in runs
