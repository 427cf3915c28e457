"""The GitHub workflows: actionlint- and yamllint-clean, least privilege, pinned actions, the GPU
runner never reached by code from forks or pull requests, and the site published from CPU CI alone:
a push to main, once the tests and the strict build pass."""
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
PAGES_ACTIONS = ("actions/configure-pages@", "actions/upload-pages-artifact@", "actions/deploy-pages@")
# What a job may ask for: to read the repository; Pages' deployment (CPU CI's deploy job alone);
# the records' pull request (GPU CI's records-pr job alone).
READ = {"contents": "read"}
PAGES_PERMISSIONS = {"pages": "write", "id-token": "write"}
PR_PERMISSIONS = {"contents": "write", "pull-requests": "write"}
ON_PUSH_TO_MAIN = {"github.event_name == 'push'", "github.ref == 'refs/heads/main'"}


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


def test_yamllint_is_clean():
    """The repository's .yamllint.yml: yamllint's defaults with GitHub's workflow conventions."""
    proc = subprocess.run([sys.executable, "-m", "yamllint", "--strict", "-f", "parsable",
                           *map(str, WORKFLOWS)], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_least_privilege_and_pinned_actions(path):
    wf = load(path)
    assert wf.get("permissions") == {}, "top level grants nothing; jobs ask for what they need"
    assert "concurrency" in wf
    for name, job in wf["jobs"].items():
        assert "permissions" in job, f"job {name} must state its permissions"
        assert job["permissions"] in (READ, PAGES_PERMISSIONS, PR_PERMISSIONS), name
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


def _conjuncts(expr: str) -> set[str]:
    """The terms of an `if:` that is a plain AND of comparisons (no `||`, no status function
    such as always() that would run it after a failure)."""
    expr = expr.strip()
    if expr.startswith("${{") and expr.endswith("}}"):
        expr = expr[3:-2]
    assert "||" not in expr and not re.search(r"\b(always|failure|cancelled)\(", expr), expr
    return {" ".join(t.split()) for t in expr.split("&&")}


def _jobs_using(action: str) -> list[tuple[str, str, dict]]:
    return [(path.name, name, job) for path in WORKFLOWS
            for name, job in load(path)["jobs"].items() if _steps_using(job, action)]


def test_cpu_ci_publishes_the_strict_build_to_pages_only_from_a_push_to_main():
    wf = load(REPO / ".github" / "workflows" / "cpu.yml")
    # Pull requests (from forks too) run with `pull_request`: a read-only token, no OIDC token
    # for Pages. `pull_request_target` or `workflow_run` would hand them the repository's.
    assert triggers(wf) == {"pull_request", "push"}
    assert wf["on"]["push"]["branches"] == ["main"]

    # One deploy job in all the workflows: CPU CI's, with Pages' permissions and no others,
    # only on a push to main, and only after the job that tests and builds succeeded.
    ((where, name, deploy),) = _jobs_using("actions/deploy-pages@")
    assert where == "cpu.yml"
    assert deploy["permissions"] == PAGES_PERMISSIONS
    assert deploy["environment"]["name"] == "github-pages"
    assert ON_PUSH_TO_MAIN <= _conjuncts(deploy["if"])
    needs = deploy["needs"] if isinstance(deploy["needs"], list) else [deploy["needs"]]
    # It runs no code of the repository: only the Pages actions, pinned.
    assert all(s.get("uses", "").startswith(PAGES_ACTIONS) and "run" not in s
               for s in deploy["steps"])

    # The artifact it deploys is uploaded by a job it needs, after `make test` and `make build`
    # in that job, in a step that runs only when every step before it passed.
    ((where, build_name, build),) = _jobs_using("actions/upload-pages-artifact@")
    assert where == "cpu.yml" and build_name in needs
    assert build["permissions"] == READ
    steps = build["steps"]
    runs = [s.get("run") for s in steps]
    (upload,) = _steps_using(build, "actions/upload-pages-artifact@")
    at = steps.index(upload)
    assert runs.index("make test") < at and runs.index("make build") < at
    for step in steps[:at]:
        assert not step.get("continue-on-error"), step
        if step.get("run") in ("make test", "make build"):
            assert "if" not in step, step
    assert ON_PUSH_TO_MAIN <= _conjuncts(upload["if"])
    assert upload["with"]["path"] == "site/"  # what `make build` writes (mkdocs' site_dir)
    assert upload["with"].get("name", "github-pages") == \
        (deploy["steps"][-1].get("with") or {}).get("artifact_name", "github-pages")
    assert "continue-on-error" not in build and "continue-on-error" not in deploy


def test_only_cpu_ci_deploy_job_may_touch_pages():
    for path in WORKFLOWS:
        for name, job in load(path)["jobs"].items():
            perms = job.get("permissions", {})
            uses_pages = [s["uses"] for s in job.get("steps", [])
                          if s.get("uses", "").startswith(("actions/configure-pages@",
                                                           "actions/deploy-pages@"))]
            if (path.name, name) == ("cpu.yml", "deploy"):
                continue
            assert "pages" not in perms and "id-token" not in perms, (path.name, name)
            assert not uses_pages, (path.name, name)
            assert "environment" not in job, (path.name, name)


def test_gpu_ci_deploys_nothing():
    """GPU CI proposes records through its pull request; merging it publishes them (CPU CI)."""
    wf = load(REPO / ".github" / "workflows" / "gpu.yml")
    for name, job in wf["jobs"].items():
        assert not [s for s in job.get("steps", []) if s.get("uses", "").startswith(PAGES_ACTIONS)], name
        assert not set(job.get("permissions", {})) & {"pages", "id-token"}, name
        assert "environment" not in job, name


def test_cpu_ci_checks_out_the_history_the_tests_read():
    """tests/records/test_gpu_notebook.py checks the commit the notebook pins: not in a shallow clone."""
    wf = load(REPO / ".github" / "workflows" / "cpu.yml")
    (checkout,) = [s for j in wf["jobs"].values() for s in _steps_using(j, "actions/checkout@")]
    assert checkout["with"]["fetch-depth"] == 0
