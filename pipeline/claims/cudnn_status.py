"""cuDNN's status codes, read from the installed cuDNN's header, with the site's advice for each.

The troubleshooting page lists every `CUDNN_STATUS_*` name of the installed cuDNN: its value and
its description are read from `include/cudnn_graph.h` of the installed `nvidia-cudnn` wheel at
build time, never typed by hand. What the site says about each family (cuDNN 9 groups the codes
by thousands: the header's `CUDNN_STATUS_CATEGORY`) and about some codes lives in
data/cudnn_status.yml, in English and Spanish. Which RNN functions of `cudnn_adv.h` name a code
in their documentation (`@retval`) is read from that header too.

In a page:
  <!-- cudnn-status: FAMILY -->   FAMILY is 0, 1000, 2000, 3000, 4000, 5000 or `deprecated`:
                                  the family's advice, then each of its codes as a list item

`problems()` compares the header and the data: a code of the header the data lacks, or a code
the data names that the header lacks, is a problem, and the build stops on it (the hook in
pipeline/pages/hooks/generated_sections.py, tests/claims/test_cudnn_status.py).
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from pipeline.running import yaml_load

MARKER = re.compile(r"<!--\s*cudnn-status:\s*(\w+)\s*-->")
FAMILIES = ("0", "1000", "2000", "3000", "4000", "5000", "deprecated")
# One enum entry: NAME [CUDNN_DEPRECATED_ENUM] = VALUE [/* comment */], /**< description */
ENTRY = re.compile(r"(CUDNN_STATUS_\w+)(\s+CUDNN_DEPRECATED_ENUM)?\s*=\s*(\w+)\s*"
                   r"(?:/\*(?!\*<).*?\*/\s*)?,?\s*/\*\*<\s*(.*?)\s*\*/", re.S)
SINCE = re.compile(r"\s*@since cuDNN [\d.]+\s*")
DEPRECATED = re.compile(r"@deprecated Use (CUDNN_STATUS_\w+)\.?")
# A documented function of a header: its /** ... */ block, then its declaration.
DOCUMENTED = re.compile(r"/\*\*?(?P<doc>(?:(?!\*/).)*)\*/\s*(?:CUDNN_DEPRECATED\s+)?cudnnStatus_t"
                        r"\s+CUDNNWINAPI\s+(?P<name>\w+)\s*\(", re.S)
RETURNS = re.compile(r"(?:@retval|\\returns|^\s*\*\s+)\s*(CUDNN_STATUS_\w+)", re.M)

WORDS = {
    "en": {"value": "value", "alias": "deprecated; the header says to use {target} ({value})",
           "named_by": "Named in the documentation of {functions}.",
           "and": "and"},
    "es": {"value": "valor", "alias": "obsoleto; la cabecera dice que se use {target} ({value})",
           "named_by": "Lo nombra la documentación de {functions}.",
           "and": "y"},
}


class StatusError(ValueError):
    """The header or the data cannot be read as expected."""


@dataclass
class Status:
    name: str
    value: int
    description: str  # the header's, without its @since
    alias_of: str | None = None  # a deprecated name: the code it stands for

    @property
    def family(self) -> str:
        if self.alias_of:
            return "deprecated"
        return str(self.value // 1000 * 1000)  # CUDNN_STATUS_CATEGORY in cudnn_graph.h


def cudnn_folder() -> Path:
    """The installed cuDNN wheel's folder (nvidia/cudnn), without importing it."""
    import importlib.util
    spec = importlib.util.find_spec("nvidia.cudnn")
    if spec is None:
        raise StatusError("nvidia.cudnn is not installed (the nvidia-cudnn-cu12 wheel)")
    return Path(list(spec.submodule_search_locations)[0])


def read_header(path: Path) -> list[Status]:
    """Every name of the `cudnnStatus_t` enum, in the header's order."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r"typedef enum\s*\{(.*?)\}\s*cudnnStatus_t\s*;", text, re.S)
    if m is None:
        raise StatusError(f"{path}: no `typedef enum {{...}} cudnnStatus_t;`")
    body = m.group(1)
    found: list[Status] = []
    values: dict[str, int] = {}
    for e in ENTRY.finditer(body):
        name, deprecated, value, doc = e.group(1), e.group(2), e.group(3), e.group(4)
        description = SINCE.sub(" ", " ".join(doc.split())).strip()
        alias_of = None
        if value.isdigit():
            number = int(value)
        elif value in values:
            number, alias_of = values[value], value
        else:
            raise StatusError(f"{path}: {name} = {value}, a name not defined before it")
        if deprecated and alias_of is None:  # a deprecated name with a value of its own
            target = DEPRECATED.search(description)
            alias_of = target.group(1) if target else name
        values[name] = number
        found.append(Status(name, number, description, alias_of))
    named = set(re.findall(r"\b(CUDNN_STATUS_\w+)\s*(?:CUDNN_DEPRECATED_ENUM\s*)?=", body))
    if named != {s.name for s in found}:
        raise StatusError(f"{path}: could not read {sorted(named - {s.name for s in found})}")
    return found


def documented_returns(path: Path, keep=lambda name: True) -> dict[str, list[str]]:
    """{status name: [function, ...]}: the functions of a header whose documentation names the
    status (`@retval`, `\\returns`), in the header's order."""
    named: dict[str, list[str]] = {}
    for m in DOCUMENTED.finditer(path.read_text(encoding="utf-8")):
        if not keep(m.group("name")):
            continue
        for status in dict.fromkeys(RETURNS.findall(m.group("doc"))):
            if status == "CUDNN_STATUS_SUCCESS":  # every function names it
                continue
            named.setdefault(status, []).append(m.group("name"))
    return named


def rnn_function(name: str) -> bool:
    return "RNN" in name or name == "cudnnAdvVersionCheck"


# The headers whose documented functions the page names, and which of their functions: every
# framework calls cudnnCreate first, then the RNN functions of cudnn_adv.h.
DOCUMENTED_IN = (("cudnn_graph.h", lambda name: name == "cudnnCreate"),
                 ("cudnn_adv.h", rnn_function))


def all_documented_returns(include: Path) -> dict[str, list[str]]:
    """{status: ["`cudnnCreate` (`cudnn_graph.h`)", ...]} over DOCUMENTED_IN."""
    named: dict[str, list[str]] = {}
    for header, keep in DOCUMENTED_IN:
        for status, functions in documented_returns(include / header, keep).items():
            named.setdefault(status, []).extend(f"`{f}` (`{header}`)" for f in functions)
    return named


def load_data(path: Path) -> dict:
    data = yaml_load.load(path.read_text(encoding="utf-8")) or {}
    if set(data) != {"families", "codes"}:
        raise StatusError(f"{path.name}: needs `families` and `codes`")
    families = {str(k): v for k, v in data["families"].items()}
    if set(families) != set(FAMILIES):
        raise StatusError(f"{path.name}: families are {', '.join(FAMILIES)}; has "
                          f"{', '.join(sorted(families))}")
    for key, family in families.items():
        for lang in WORDS:
            if not (isinstance(family, dict) and isinstance(family.get(lang), str)
                    and family[lang].strip()):
                raise StatusError(f"{path.name}: family {key} needs its advice in `{lang}`")
    codes = data["codes"] or {}
    for name, note in codes.items():
        if note is None:
            continue
        if not (isinstance(note, dict) and set(note) == set(WORDS)
                and all(isinstance(v, str) and v.strip() for v in note.values())):
            raise StatusError(f"{path.name}: {name}: a code's note is empty or has `en` and `es`")
    return {"families": families, "codes": codes}


def problems(statuses: list[Status], data: dict) -> list[str]:
    """What the header and the data disagree on: a code either side lacks."""
    in_header = [s.name for s in statuses]
    in_data = list(data["codes"])
    found = [f"data/cudnn_status.yml lacks {name}, a status of the installed cuDNN's header"
             for name in in_header if name not in data["codes"]]
    found += [f"data/cudnn_status.yml names {name}, which the installed cuDNN's header does "
              f"not have" for name in in_data if name not in in_header]
    return found


def _item(s: Status, by_name: dict[str, Status], note: dict | None, named_by: list[str],
          lang: str) -> str:
    w = WORDS[lang]
    head = f"`{s.name}` ({w['value']} {s.value})"
    if s.alias_of and s.alias_of != s.name:
        head += ": " + w["alias"].format(target=f"`{s.alias_of}`",
                                         value=by_name[s.alias_of].value
                                         if s.alias_of in by_name else s.value)
    text = html.escape(DEPRECATED.sub("", s.description).strip(), quote=False)
    line = f"- {head}. *{text}*" if text else f"- {head}."
    if named_by:
        functions = named_by
        joined = functions[0] if len(functions) == 1 else (
            ", ".join(functions[:-1]) + f" {w['and']} " + functions[-1])
        line += " " + w["named_by"].format(functions=joined)
    if note:
        line += " " + " ".join(note[lang].split())
    return line


def render_family(family: str, statuses: list[Status], data: dict, returns: dict[str, list[str]],
                  lang: str) -> str:
    """The family's advice, then one list item per code of the installed header."""
    if family not in FAMILIES:
        raise StatusError(f"<!-- cudnn-status: {family} --> names no family ({', '.join(FAMILIES)})")
    by_name = {s.name: s for s in statuses}
    members = [s for s in statuses if s.family == family]
    advice = data["families"][family][lang].strip()
    items = [_item(s, by_name, data["codes"].get(s.name), returns.get(s.name, []), lang)
             for s in members]
    return advice + "\n\n" + "\n".join(items)


def render(markdown: str, lang: str, root: Path) -> tuple[str, list[str]]:
    """The page with its cudnn-status markers drawn, and the problems found."""
    if not MARKER.search(markdown):
        return markdown, []
    folder = cudnn_folder()
    statuses = read_header(folder / "include" / "cudnn_graph.h")
    data = load_data(root / "data" / "cudnn_status.yml")
    returns = all_documented_returns(folder / "include")
    found = problems(statuses, data)
    lang = lang if lang in WORDS else "en"

    def one(m: re.Match) -> str:
        try:
            return render_family(m.group(1), statuses, data, returns, lang)
        except StatusError as e:
            found.append(str(e))
            return m.group(0)
    return MARKER.sub(one, markdown), found
