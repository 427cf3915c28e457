"""GPU only (`pytest -m gpu`): check_module on PyTorch RNNs that are not an nn.RNN module
(tests/torch_rnn_cases.py) says what really runs on a GPU. PyTorch's profiler shows whether the
forward ran cuDNN's RNN kernel (aten::_cudnn_rnn); the checker, given the same batch on the GPU
(or the graph exported there), must report nothing exactly then. Needs only PyTorch."""
from __future__ import annotations

import sys

import pytest

from conftest import REPO

torch = pytest.importorskip("torch", reason="needs PyTorch")
sys.path.insert(0, str(REPO / "snippets"))
sys.path.insert(0, str(REPO / "tests"))
import cudnn_check  # noqa: E402
import torch_rnn_cases  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", torch_rnn_cases.NAMES)
def test_check_module_on_a_gpu_is_what_pytorch_runs(name):
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU visible to PyTorch")
    module = torch_rnn_cases.modules("cuda")[name]
    x = torch_rnn_cases.X.cuda()
    run = module.module() if isinstance(module, torch.export.ExportedProgram) else module
    with torch.autograd.profiler.profile() as prof, torch.no_grad():
        run(x)
    ran_cudnn = "aten::_cudnn_rnn" in {e.name for e in prof.function_events}
    graph = isinstance(module, (torch.export.ExportedProgram, torch.fx.GraphModule))
    found = cudnn_check.check_module(module, sample=None if graph else x)
    assert (found == []) == ran_cudnn, (name, ran_cudnn, [str(f) for f in found])
