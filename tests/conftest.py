"""Shared fixtures: the repository's paths, and small throw-away projects that go through the
same runner and hook as the real site, with tiny snippets instead of TensorFlow ones."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
# On a GPU, the tests marked gpu run TensorFlow, PyTorch and JAX in one process: none of them may
# take the GPU's memory for itself (TensorFlow takes all of it, JAX three quarters, by default).
os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

HOOK = REPO / "pipeline" / "mkdocs_hook.py"


class MiniProject:
    """A minimal MkDocs project using the real hook: snippets/, docs/index.md, mkdocs.yml."""

    def __init__(self, root: Path):
        self.root = root
        (root / "snippets").mkdir()
        (root / "docs").mkdir()
        (root / "requirements.txt").write_text("nothing==1\n")
        (root / "mkdocs.yml").write_text(textwrap.dedent(f"""\
            site_name: mini
            strict: true
            hooks: ["{HOOK}"]
            markdown_extensions:
              - admonition
              - pymdownx.superfences
              - pymdownx.snippets:
                  base_path: [snippets]
                  check_paths: true
            """))
        self.pages: list[str] = []

    def snippet(self, rel: str, code: str) -> Path:
        path = self.root / "snippets" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code))
        return path

    def page(self, *rels: str) -> None:
        """docs/index.md embedding and showing the output of each snippet."""
        body = ["# Mini", ""]
        for rel in rels:
            body += ["```python", f'--8<-- "{rel}"', "```", "", f"<!-- output: {rel} -->", ""]
        (self.root / "docs" / "index.md").write_text("\n".join(body))

    def build(self, *extra: str, env: dict | None = None, timeout: float = 120):
        """Run `mkdocs build` in a child process, as a reader would."""
        return subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict",
             "-d", str(self.root / "site"), *extra],
            cwd=self.root, capture_output=True, text=True, timeout=timeout,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **(env or {})},
        )


def executed_count(build_log: str) -> int:
    """Sum of 'snippets: N executed' over a build's log (one line per language pass)."""
    import re
    return sum(int(n) for n in re.findall(r"snippets: (\d+) executed", build_log))


@pytest.fixture
def mini(tmp_path) -> MiniProject:
    return MiniProject(tmp_path)


@pytest.fixture
def cpu_only(monkeypatch):
    """Pin the device to CPU whatever machine runs the tests."""
    monkeypatch.setenv("SNIPPETS_DEVICE", "CPU")
    from pipeline import device
    device.device_kind.cache_clear()
    yield
    device.device_kind.cache_clear()


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """One strict build of the whole site (runs stale snippets through the hook), shared by every
    test module that reads the built pages."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-6000:]
    return out
