"""The data files read through libyaml give what PyYAML's pure-Python safe loader gives."""
from __future__ import annotations

import pytest
import yaml

from conftest import REPO
from pipeline.running import yaml_load


@pytest.mark.parametrize("path", sorted((REPO / "data").rglob("*.yml")),
                         ids=lambda p: p.relative_to(REPO / "data").as_posix())
def test_a_data_file_reads_as_the_safe_loader_reads_it(path):
    text = path.read_text(encoding="utf-8")
    assert yaml_load.load(text) == yaml.load(text, Loader=yaml.SafeLoader)


def test_what_the_safe_loader_refuses_is_refused():
    with pytest.raises(yaml.YAMLError):
        yaml_load.load("key: [unclosed\n")
    with pytest.raises(yaml.YAMLError):  # no Python objects from a data file
        yaml_load.load("!!python/object/apply:os.system ['true']\n")
