"""The messages the compiled RNN kernels of the installed libraries can print, read from their
shared objects, with what the site says about each (data/kernel_messages.yml).

A compiled library keeps its messages as NUL-terminated strings. Which of them belong to the
recurrent kernels is read two ways, both from the binary itself:

- a source file's window: the compiler stores a file's strings together, after the path its
  error macros name ("/__w/pytorch/pytorch/aten/src/ATen/native/cudnn/RNN.cpp"); the strings
  from such a path to the next source path are that file's (PyTorch keeps them so);
- the kernels' own words: a string that names the RNN (`RNN`, `Rnn`, `rnn` as a word or a part
  of a name: `DoRnnForward`, `CudnnRNN`) or its state tensors (`input_h`, `output_c`...).
  TensorFlow's linker scatters a file's strings, so only this finds its cuDNN RNN kernel's.

Of those, a string is a message when it reads as one (`is_message`): two words or more, not a
symbol, a type name, an op's signature or a file path. A message that the library completes
(`"Expected hidden size "` then the sizes) is kept as the library's text; `{}` in the page marks
where the library appends.

Each candidate is in data/kernel_messages.yml: a row (the condition, whether only a GPU can
trigger it, what to do in English and Spanish), or left out with the reason, alone or by a
pattern for a family (PyTorch's internal asserts, TensorFlow Lite's converter). `problems()`
lists a candidate the data lacks and a row whose message the binary no longer holds;
tests/claims/test_kernel_messages.py runs it against the installed binaries. Reading them takes
some 20 s, so the build draws the page from the data alone.

Run by hand, `python -m pipeline.claims.kernel_messages` prints, as YAML rows to fill in, each
candidate the data does not cover yet, and each stale row.

In a page:
  <!-- kernel-messages: LIBRARY -->   LIBRARY is tensorflow, torch or jaxlib: a heading per row
"""
from __future__ import annotations

import hashlib
import mmap
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml
from pipeline.running import yaml_load

MARKER = re.compile(r"<!--\s*kernel-messages:\s*(\w+)\s*-->")

# Each library: its package, the distribution its release is read from, how a page names it,
# and the shared objects (relative to the package folder) that hold its RNN kernels.
LIBRARIES = {
    "tensorflow": {"package": "tensorflow", "dist": "tensorflow", "name": "TensorFlow",
                   "files": ("libtensorflow_cc.so.2", "libtensorflow_framework.so.2")},
    "torch": {"package": "torch", "dist": "torch", "name": "PyTorch",
              "files": ("lib/libtorch_cuda.so", "lib/libtorch_cpu.so")},
    "jaxlib": {"package": "jaxlib", "dist": "jaxlib", "name": "jaxlib",
               "files": ("libjax_common.so",)},
}
# jaxlib's cuDNN RNN kernel is in its CUDA plugin, a package of its own: read when installed.
JAX_PLUGINS = ("jax_cuda13_plugin", "jax_cuda12_plugin", "jax_rocm60_plugin", "jax_rocm7_plugin")

# A recurrent kernel's source file, as its error macros name it.
RNN_SOURCES = re.compile(rb"(?:aten/src/ATen/native/(?:cudnn/RNN|RNN|miopen/RNN_miopen|"
                         rb"mps/operations/RNN)\.(?:cpp|mm)|aten/src/ATen/cudnn/AutocastRNN\.cpp|"
                         rb"tensorflow/core/kernels/cudnn_rnn_ops\.cc)$")
SOURCE_PATH = re.compile(rb"^/?[\w./-]+\.(?:cpp|cc|cu|mm|c)$")
# The kernels' own words: the RNN as a word or a part of a name, or its state tensors.
RNN_WORDS = re.compile(r"(?:^|[^A-Za-z]|(?<=[a-z]))(?:RNN|Rnn|rnn)(?=$|[^a-z]|(?<=Rnn)[A-Z])"
                       r"|\b(?:input_h|input_c|output_h|output_c)\b")
KEYWORDS = (b"RNN", b"Rnn", b"rnn", b"input_h", b"input_c", b"output_h", b"output_c")
PRINTABLE = re.compile(rb"[\x20-\x7e\t]+")

WORDS = {
    "en": {"in": "In", "gpu": "Only a GPU can trigger it.", "cpu": "A CPU triggers it too.",
           "when": "When", "do": "What to do:", "see": "The full answer",
           "source": "Read from the shared objects of {name} {version}", "none": "None."},
    "es": {"in": "En", "gpu": "Solo una GPU puede provocarlo.",
           "cpu": "También lo provoca una CPU.", "when": "Cuándo", "do": "Qué hacer:",
           "see": "La respuesta completa",
           "source": "Leído de los objetos compartidos de {name} {version}",
           "none": "Ninguno."},
}


class KernelMessagesError(ValueError):
    """The binaries or the data cannot be read as expected."""


# ------------------------------------------------------------------ reading the binaries

def binaries(library: str) -> list[Path]:
    """The installed shared objects of a library's RNN kernels (those that exist)."""
    from pipeline.claims.messages import package_folder
    spec = LIBRARIES[library]
    folder = package_folder(spec["package"])
    if folder is None:
        raise KernelMessagesError(f"{spec['package']} is not installed")
    found = [folder / f for f in spec["files"] if (folder / f).is_file()]
    if library == "jaxlib":
        for plugin in JAX_PLUGINS:
            extra = package_folder(plugin)
            if extra is not None:
                found += sorted(extra.glob("*.so"))
    if not found:
        raise KernelMessagesError(f"{library}: none of {', '.join(spec['files'])} is installed")
    return found


def _string_at(data, pos: int) -> tuple[int, int]:
    """The bounds of the NUL-terminated string holding byte `pos`: it starts after the last byte
    that is not text (a NUL, or the end of a table stored before it)."""
    low = max(0, pos - 4096)
    chunk = bytes(data[low:pos])
    last = max((chunk.rfind(bytes([b])) for b in range(256) if not 0x20 <= b <= 0x7e and b != 9),
               default=-1)
    start = low + last + 1
    end = data.find(b"\0", pos)
    return start, end


def _text(raw: bytes) -> str | None:
    """A string of the binary as text, or None when it is not one printable run."""
    if not raw or not PRINTABLE.fullmatch(raw):
        return None
    return raw.decode("ascii")


def _window(data, end: int, limit: int = 300):
    """The strings after a source path, up to the next source path: that file's strings."""
    pos = end + 1
    for _ in range(limit):
        while pos < len(data) and data[pos] == 0:
            pos += 1
        nxt = data.find(b"\0", pos)
        if nxt < 0:
            return
        raw = bytes(data[pos:nxt])
        pos = nxt + 1
        if SOURCE_PATH.match(raw):
            return
        if PRINTABLE.fullmatch(raw):  # not text: padding or a table between the strings
            yield raw.decode("ascii")


def is_message(text: str) -> bool:
    """A string that reads as a message: words, not a symbol, a type, a signature or a path."""
    if text.startswith(("_Z", "/", "%s", "N3c10")) or "::" in text or "->" in text:
        return False
    if re.search(r"[<>{}]|\(Tensor|\bself\b|\$\d", text):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z_']+", text)
    return len(words) >= 2 and bool(re.search(r"[A-Za-z]{2,}\s+\S", text))


def read_strings(path: Path) -> tuple[set[str], set[str]]:
    """The strings of one shared object that name the RNN, and those in an RNN source's
    window."""
    named, windowed = set(), set()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        for word in KEYWORDS:
            pos = data.find(word)
            while pos >= 0:
                start, end = _string_at(data, pos)
                text = _text(bytes(data[start:end])) if end > 0 else None
                if text is not None:
                    named.add(text)
                    if RNN_SOURCES.search(text.encode()):
                        windowed.update(_window(data, end))
                pos = data.find(word, max(pos + 1, end))
    return {t for t in named if RNN_WORDS.search(t)}, windowed


@dataclass
class Candidate:
    library: str
    text: str  # the string as the binary holds it
    files: list[str]  # the shared objects holding it

    @property
    def message(self) -> str:
        return " ".join(self.text.split())


def extract(library: str) -> dict[str, Candidate]:
    """Every string of a library's RNN kernels that reads as a message, by its text."""
    out: dict[str, Candidate] = {}
    for path in binaries(library):
        named, windowed = read_strings(path)
        for text in sorted(named | windowed):
            if not is_message(text):
                continue
            out.setdefault(text, Candidate(library, text, [])).files.append(path.name)
    return out


def missing(rows: list[dict]) -> list[dict]:
    """The rows whose message no installed binary of their library holds as a string (or a
    string's end: the linker merges tails)."""
    left = list(rows)
    for library in LIBRARIES:
        mine = [r for r in left if r["library"] == library]
        if not mine:
            continue
        for path in binaries(library):
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                mine = [r for r in mine if data.find(r["message"].encode("ascii") + b"\0") < 0]
        left = [r for r in left if r["library"] != library or r in mine]
    return left


# ------------------------------------------------------------------ the data

def row_id(library: str, message: str) -> str:
    words = re.findall(r"[a-z0-9]+", message.lower())[:5]
    digest = hashlib.sha1(f"{library}\n{message}".encode()).hexdigest()[:6]
    return "-".join(["kernel", library, *words, digest])


def load_data(path: Path) -> dict:
    try:
        data = yaml_load.load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise KernelMessagesError(f"{Path(path).name}: not readable ({e})") from None
    name = Path(path).name
    if not isinstance(data, dict) or set(data) - {"rows", "left_out"}:
        raise KernelMessagesError(f"{name}: `rows` and `left_out`, nothing else")
    rows, left = data.get("rows") or [], data.get("left_out") or []
    for row in rows:
        need = {"library", "message", "condition", "gpu", "en", "es"}
        if not isinstance(row, dict) or not need <= set(row) or set(row) - need - {"see"}:
            raise KernelMessagesError(f"{name}: a row holds {', '.join(sorted(need))} (and may "
                                      f"have `see`): {row!r}"[:300])
        if row["library"] not in LIBRARIES or not isinstance(row["gpu"], bool):
            raise KernelMessagesError(f"{name}: {row['message']!r}: library or gpu")
        if not (isinstance(row["condition"], dict) and set(row["condition"]) == set(WORDS)):
            raise KernelMessagesError(f"{name}: {row['message']!r}: condition in `en` and `es`")
        if "see" in row and not re.fullmatch(r"[\w-]+\.md#[\w-]+", str(row["see"])):
            raise KernelMessagesError(f"{name}: {row['message']!r}: `see` is page.md#anchor")
    for item in left:
        keys = set(item) if isinstance(item, dict) else set()
        reason = item.get("reason") if isinstance(item, dict) else None
        what = item.get("what") if isinstance(item, dict) else None
        if not (keys in ({"library", "message", "reason"}, {"library", "match", "what", "reason"})
                and all(isinstance(d, dict) and set(d) == set(WORDS)
                        and all(isinstance(v, str) and v.strip() for v in d.values())
                        for d in (reason, what or reason))):
            raise KernelMessagesError(f"{name}: a left-out item holds `library`, `message` (or "
                                      f"`match`, a pattern, with `what` it covers in `en` and "
                                      f"`es`), and `reason` in `en` and `es`: {item!r}"[:300])
    return {"rows": rows, "left_out": left}


def covered_by(candidate: Candidate, data: dict) -> str | None:
    """'row', 'left out' or None: how the data covers a candidate."""
    for row in data["rows"]:
        if row["library"] == candidate.library and row["message"] == candidate.text:
            return "row"
    for item in data["left_out"]:
        if item["library"] != candidate.library:
            continue
        if item.get("message") == candidate.text or (
                "match" in item and re.search(item["match"], candidate.text)):
            return "left out"
    return None


def problems(found: dict[str, dict[str, Candidate]], data: dict) -> list[str]:
    """A candidate of the installed binaries that the data lacks, a row whose message no
    installed binary of its library holds, and a left-out item that covers nothing."""
    out = []
    for library, candidates in found.items():
        for c in candidates.values():
            if covered_by(c, data) is None:
                out.append(f"data/kernel_messages.yml lacks {library}: {c.text!r} "
                           f"({', '.join(c.files)}): a row, or why it is left out")
    for row in missing([r for r in data["rows"] if r["library"] in found]):
        out.append(f"data/kernel_messages.yml: {row['library']}: {row['message']!r} is in no "
                   "installed binary any more")
    for item in data["left_out"]:
        lib = item["library"]
        if lib in found and not any(
                item.get("message") == c.text
                or ("match" in item and re.search(item["match"], c.text))
                for c in found[lib].values()):
            what = item.get("message") or item["match"]
            out.append(f"data/kernel_messages.yml: left_out {what!r} ({lib}) covers no string of "
                       "the installed binaries")
    return out


# ------------------------------------------------------------------ the page

def installed_release(library: str) -> str:
    from importlib.metadata import version
    return version(LIBRARIES[library]["dist"]).split("+")[0]


def shown(message: str) -> str:
    """The message as the page shows it: `{}` where the library appends (a text ending in a
    space or a colon)."""
    text = " ".join(message.split())
    return text + " {}" if message.endswith((" ", ":", "=")) else text


def _code(text: str) -> str:
    ticks = max((len(t) for t in re.findall(r"`+", text)), default=0) + 1
    pad = " " if text.startswith("`") or text.endswith("`") or ticks > 1 else ""
    return "`" * ticks + pad + text + pad + "`" * ticks


def render_library(library: str, data: dict, lang: str) -> str:
    if library not in LIBRARIES:
        raise KernelMessagesError(f"<!-- kernel-messages: {library} --> names no library "
                                  f"({', '.join(LIBRARIES)})")
    w = WORDS[lang]
    spec = LIBRARIES[library]
    files = ", ".join(f"`{Path(f).name}`" for f in spec["files"])
    out = [w["source"].format(name=spec["name"], version=installed_release(library))
           + f" ({files})."]
    rows = [r for r in data["rows"] if r["library"] == library]
    if not rows:
        out.append(w["none"])
    for row in rows:
        advice = " ".join(row[lang].split())
        if row.get("see"):
            advice += f" [{w['see']}]({row['see']})."
        trigger = w["gpu"] if row["gpu"] else w["cpu"]
        condition = " ".join(row["condition"][lang].split())
        # Search reads the message (the heading) and finds its row; the rest is read, not
        # searched: each language's index has a size limit. The trigger's words stay in it: a
        # row whose Spanish entry equals the English one is dropped from the Spanish index
        # (mkdocs-static-i18n's `reconfigure_search`).
        out.append(f"### {_code(shown(row['message']))} {{ #{row_id(library, row['message'])} }}"
                   f"\n\n{trigger} <span data-search-exclude>**{w['when']}:** {condition} "
                   f"**{w['do']}** {advice}</span>")
    return "\n\n".join(out)


def render_left_out(data: dict, lang: str) -> str:
    items = []
    for item in data["left_out"]:
        what = _code(shown(item["message"])) if "message" in item else \
            " ".join(item["what"][lang].split())
        items.append(f"- {LIBRARIES[item['library']]['name']}: {what}: "
                     f"{' '.join(item['reason'][lang].split())}")
    return "\n".join(items)


def render(markdown: str, lang: str, root: Path) -> tuple[str, list[str]]:
    if not MARKER.search(markdown):
        return markdown, []
    data = load_data(root / "data" / "kernel_messages.yml")
    lang = lang if lang in WORDS else "en"
    issues: list[str] = []

    def one(m: re.Match) -> str:
        if m.group(1) == "left_out":
            return render_left_out(data, lang)
        try:
            return render_library(m.group(1), data, lang)
        except KernelMessagesError as e:
            issues.append(str(e))
            return m.group(0)
    return MARKER.sub(one, markdown), issues


def main(argv: list[str]) -> int:
    """Print each candidate the data does not cover, as a row to fill in, and each problem."""
    root = Path(__file__).resolve().parents[2]
    try:
        data = load_data(root / "data" / "kernel_messages.yml")
        libraries = argv or list(LIBRARIES)
        found = {lib: extract(lib) for lib in libraries}
    except KernelMessagesError as e:
        print(e, file=sys.stderr)
        return 1
    new = [{"library": c.library, "message": c.text, "files": c.files}
           for cands in found.values() for c in cands.values() if covered_by(c, data) is None]
    for lib, cands in found.items():
        print(f"# {lib}: {len(cands)} candidates", file=sys.stderr)
    if new:
        print(yaml.safe_dump(new, allow_unicode=True, sort_keys=False, width=100))
    issues = [p for p in problems(found, data) if "lacks" not in p]
    for p in issues:
        print(p, file=sys.stderr)
    return 1 if new or issues else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
