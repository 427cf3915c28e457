"""YAML read as `yaml.safe_load` reads it, through libyaml's C parser when PyYAML was built
with it: the same Python objects (SafeLoader's constructors), about ten times sooner. The data
files under data/ cost a build about 1.5 s with the pure-Python parser (each is read for both
languages). Errors are yaml.YAMLError, as from safe_load."""
from __future__ import annotations

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str):
    return yaml.load(text, Loader=LOADER)  # noqa: S506 - a safe loader, C or Python
