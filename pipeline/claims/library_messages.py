"""Every message the recurrent-layer code of the installed libraries can raise or warn, read from
their Python source, with what the site says to do about each.

The messages are read at build time from the installed packages (found with importlib, never
imported: importing TensorFlow or PyTorch takes seconds), never typed by hand: each `raise
X("...")` and each `warnings.warn(...)` / `logging.warning(...)` call of the files in SOURCES.
A message keeps the library's literal text; what the library fills in (an f-string's `{units}`,
a `.format` field, a `%s`) is a placeholder, so a pasted line can be matched against it
(`Message.matches`). Its trigger is the library's own condition: the test of the `if` the
`raise` sits in (negated in its `else`), or the `except` that catches, and the function it is
in.

What the site says about each (what to do, in English and Spanish, or a link to a fuller answer
on another troubleshooting page; or `left_out` with the reason) lives in
data/library_messages.yml, keyed by `Message.id` (the library and its words). `problems()`
compares the two: a message of the installed libraries the data lacks, or a row of the data no
installed library holds, stops the build (pipeline/pages/hooks/generated_sections.py,
tests/claims/test_library_messages.py).

In a page:
  <!-- library-messages: LIBRARY -->   LIBRARY is keras, tf_keras, torch or jax: one heading per
                                        message of that library, its trigger and what to do
"""
from __future__ import annotations

import ast
import hashlib
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pipeline.running import yaml_load

MARKER = re.compile(r"<!--\s*library-messages:\s*(\w+)\s*-->")

# The recurrent-layer code of each library: (importable package, globs under its folder).
SOURCES = {
    "keras": ("keras", ("src/layers/rnn/*.py", "src/backend/*/rnn.py")),
    "tf_keras": ("tf_keras", ("src/layers/rnn/*.py",)),
    "torch": ("torch", ("nn/modules/rnn.py", "nn/utils/rnn.py")),
    "jax": ("jax", ("experimental/rnn.py",)),
}
# How a page names each library, with the distribution its installed release is read from.
NAMES = {"keras": ("Keras", "keras"), "tf_keras": ("tf-keras", "tf-keras"),
         "torch": ("PyTorch", "torch"), "jax": ("JAX", "jax")}
WARN_CALLS = ("warn", "warning")
PERCENT = re.compile(r"%(?:\(\w+\))?[-#0 +]*\d*(?:\.\d+)?[sdrifgxXeEc]")

WORDS = {
    "en": {"when": "when", "in": "in", "runs": "when it runs", "also": "also",
           "do": "What to do:", "see": "the full answer", "source": "Read from {name} {version}",
           "under": "in {folder}"},
    "es": {"when": "cuando", "in": "en", "runs": "al ejecutarse", "also": "también",
           "do": "Qué hacer:", "see": "la respuesta completa",
           "source": "Leído de {name} {version}", "under": "en {folder}"},
}


class LibraryMessagesError(ValueError):
    """The sources or the data cannot be read as expected."""


@dataclass
class Place:
    file: str  # relative to the package's parent folder: keras/src/layers/rnn/lstm.py
    line: int
    end_line: int  # the last line of the raise or call
    function: str  # the class and function it is in: LSTM.__init__
    kind: str  # ValueError, warnings.warn, logging.warning...
    trigger: str | None  # the library's condition, as code; None: whenever the function runs


@dataclass
class Message:
    library: str
    parts: tuple  # ("lit", text) and ("var", what the library fills in), in order
    places: list[Place] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The message as the library writes it, with its placeholders, on one line."""
        return " ".join("".join(p for _, p in self.parts).split())

    @property
    def id(self) -> str:
        """Stable while the library's words stay: the library, the first words, a short hash."""
        words = re.findall(r"[a-z0-9]+", self.literal.lower())[:5]
        digest = hashlib.sha1(f"{self.library}\n{self.text}".encode()).hexdigest()[:6]
        return "-".join([self.library.replace("_", "-"), *words, digest])

    @property
    def literal(self) -> str:
        return " ".join(" ".join(p for k, p in self.parts if k == "lit").split())

    @property
    def pattern(self) -> re.Pattern:
        """A pasted line holds this message: its literal parts in order, anything between."""
        pieces = []
        for kind, text in self.parts:
            if kind == "lit":
                words = text.split()
                if words:
                    pieces.append(r"\s+".join(map(re.escape, words)))
                if text[:1].isspace() and pieces:
                    pieces[-1] = r"\s*" + pieces[-1]
            else:
                pieces.append(r".*?")
        return re.compile(r"\s*".join(pieces), re.S)

    def matches(self, line: str) -> bool:
        return bool(self.pattern.search(line))


# ------------------------------------------------------------------ reading the source

def _format_parts(text: str, style: str) -> list[tuple[str, str]]:
    """A format string's literal parts and fields: style 'format' (str.format) or 'percent'."""
    if style == "percent":
        out, pos = [], 0
        for m in PERCENT.finditer(text):
            out += [("lit", text[pos:m.start()]), ("var", m.group(0))]
            pos = m.end()
        return out + [("lit", text[pos:])]
    out = []
    try:
        for literal, name, spec, conv in string.Formatter().parse(text):
            out.append(("lit", literal))
            if name is not None:
                out.append(("var", "{" + name + "}"))
    except ValueError:  # not a format string after all
        return [("lit", text)]
    return out


def _parts(node: ast.AST, strings: dict[str, ast.AST]) -> list[tuple[str, str]] | None:
    """The parts of a message expression, or None when it is not made from a string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [("lit", node.value)]
    if isinstance(node, ast.JoinedStr):
        return [("lit", v.value) if isinstance(v, ast.Constant)
                else ("var", "{" + ast.unparse(v.value) + "}") for v in node.values]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _parts(node.left, strings), _parts(node.right, strings)
        if a is None and b is None:
            return None
        return (a or [("var", "{" + ast.unparse(node.left) + "}")]) + \
               (b or [("var", "{" + ast.unparse(node.right) + "}")])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = _parts(node.left, strings)
        if left is not None and all(k == "lit" for k, _ in left):
            return _format_parts("".join(t for _, t in left), "percent")
        return left
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"):
        inner = _parts(node.func.value, strings)
        if inner is not None and all(k == "lit" for k, _ in inner):
            return _format_parts("".join(t for _, t in inner), "format")
        return inner
    if isinstance(node, ast.Name) and node.id in strings:  # msg = "..."; raise X(msg)
        return _parts(strings[node.id], {})
    return None


def _clean(parts: list[tuple[str, str]]) -> tuple:
    """Adjacent literals joined, empty ones dropped."""
    out: list[list[str]] = []
    for kind, text in parts:
        if kind == "lit" and not text:
            continue
        if out and kind == "lit" and out[-1][0] == "lit":
            out[-1][1] += text
        else:
            out.append([kind, text])
    return tuple((k, t) for k, t in out)


class _Reader(ast.NodeVisitor):
    """Every message of one module, with the function and condition around it."""

    def __init__(self, library: str, file: str, tree: ast.Module):
        self.library, self.file = library, file
        self.found: list[tuple[tuple, Place]] = []
        self.stack: list[ast.AST] = []  # classes, functions, ifs, excepts around the node
        # functions whose message is a parameter with a default (torch's check_hidden_size):
        # name -> (index of the parameter, counting self, its name)
        self.message_params: dict[str, tuple[int, str]] = {}
        self.tree = tree

    # --- where a node is
    def generic_visit(self, node):
        self.stack.append(node)
        super().generic_visit(node)
        self.stack.pop()

    def _function(self) -> str:
        names = [n.name for n in self.stack
                 if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
        return ".".join(names) or "<module>"

    def _trigger(self, node: ast.AST) -> str | None:
        """The library's condition for reaching `node`: the innermost `if` or `except` around
        it, within its function."""
        child = node
        for parent in reversed(self.stack):
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return None
            if isinstance(parent, ast.If):
                if child in parent.body:
                    return ast.unparse(parent.test)
                if child in parent.orelse:  # the last `else` of if/elif/...: every test false
                    return "not (" + " or ".join(map(ast.unparse, self._chain(parent))) + ")"
            if isinstance(parent, ast.match_case):
                subject = next(n for n in reversed(self.stack) if isinstance(n, ast.Match)).subject
                return f"{ast.unparse(subject)} matches {ast.unparse(parent.pattern)}"
            if isinstance(parent, ast.ExceptHandler):
                caught = ast.unparse(parent.type) if parent.type else "an exception"
                return f"except {caught}"
            child = parent
        return None

    def _chain(self, node: ast.If) -> list[ast.expr]:
        """The tests of an if/elif chain that ends at `node` (an `elif` is an If alone in the
        `else` of the one before it)."""
        tests = [node.test]
        for parent in reversed(self.stack[:self.stack.index(node)]):
            if not (isinstance(parent, ast.If) and parent.orelse == [node]):
                break
            tests.insert(0, parent.test)
            node = parent
        return tests

    def _strings(self, before: int) -> dict[str, ast.AST]:
        """Names the enclosing function assigns a string to before a line (the last wins)."""
        func = next((n for n in reversed(self.stack)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        if func is None:
            return {}
        found = {}
        assigned = sorted((n for n in ast.walk(func) if isinstance(n, ast.Assign)
                           and n.lineno < before), key=lambda n: n.lineno)
        for n in assigned:
            if (len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Name)
                    and _parts(n.value, {}) is not None):
                found[n.targets[0].id] = n.value
        return found

    def _add(self, node: ast.AST, message: ast.AST, kind: str, percent: bool = False):
        func = next((n for n in reversed(self.stack)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        parts = _parts(message, self._strings(node.lineno))
        if (parts is None and isinstance(message, ast.Call)
                and isinstance(message.func, ast.Attribute) and message.func.attr == "format"
                and isinstance(message.func.value, ast.Name)):
            self._parameter_message(func, message.func.value.id, node, kind)
            return
        if parts is None:
            return
        if percent and all(k == "lit" for k, _ in parts):
            parts = _format_parts("".join(t for _, t in parts), "percent")
        parts = _clean(parts)
        if not any(k == "lit" and re.search(r"[A-Za-z]{2}", t) for k, t in parts):
            return
        self.found.append((parts, Place(self.file, node.lineno, node.end_lineno,
                                        self._function(), kind, self._trigger(node))))

    def _parameter_message(self, func, name: str, node: ast.AST, kind: str):
        """`raise X(msg.format(...))` where `msg` is a parameter with a default: the default,
        and each string a call in this module passes for it."""
        if func is None:
            return
        args = func.args.posonlyargs + func.args.args
        defaults = dict(zip([a.arg for a in args][-len(func.args.defaults):], func.args.defaults)) \
            if func.args.defaults else {}
        if name not in [a.arg for a in args]:
            return
        index = [a.arg for a in args].index(name)
        place = Place(self.file, node.lineno, node.end_lineno, self._function(), kind,
                      self._trigger(node))
        texts = [defaults[name]] if name in defaults else []
        for call in ast.walk(self.tree):
            if not isinstance(call, ast.Call):
                continue
            callee = call.func.attr if isinstance(call.func, ast.Attribute) else \
                getattr(call.func, "id", None)
            if callee != func.name:
                continue
            method = isinstance(call.func, ast.Attribute) and args and args[0].arg == "self"
            offset = 1 if method else 0
            given = [k.value for k in call.keywords if k.arg == name]
            if len(call.args) > index - offset >= 0:
                given.append(call.args[index - offset])
            texts += given
        for text in texts:
            parts = _parts(text, {})
            if parts is not None and all(k == "lit" for k, _ in parts):
                parts = _clean(_format_parts("".join(t for _, t in parts), "format"))
                self.found.append((parts, place))

    # --- the messages
    def visit_Raise(self, node: ast.Raise):
        exc = node.exc
        if isinstance(exc, ast.Call) and exc.args:
            self._add(node, exc.args[0], ast.unparse(exc.func))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr in WARN_CALLS and node.args:
            kind = ast.unparse(node.func)
            logging_call = node.func.attr == "warning"  # logging's: "%s" with arguments
            self._add(node, node.args[0], kind, percent=logging_call and len(node.args) > 1)
        self.generic_visit(node)


def source_files(library: str) -> tuple[Path, list[Path]]:
    """The library's installed folder's parent, and its recurrent-code files (tests left out)."""
    from pipeline.claims.messages import package_folder
    package, globs = SOURCES[library]
    folder = package_folder(package)
    if folder is None:
        raise LibraryMessagesError(f"{package} is not installed")
    files = sorted({p for g in globs for p in folder.glob(g)
                    if p.is_file() and not p.name.endswith("_test.py")
                    and not p.name.startswith("test_")})
    if not files:
        raise LibraryMessagesError(f"{package}: no file matches {', '.join(globs)}")
    return folder.parent, files


def extract(library: str) -> list[Message]:
    """Every distinct message of one library's recurrent code, in the order of its files."""
    root, files = source_files(library)
    by_text: dict[str, Message] = {}
    for path in files:
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        reader = _Reader(library, rel, tree)
        reader.visit(tree)
        for parts, place in sorted(reader.found, key=lambda f: f[1].line):
            msg = Message(library, parts)
            by_text.setdefault(msg.text, msg).places.append(place)
    return list(by_text.values())


def extract_all() -> dict[str, Message]:
    found: dict[str, Message] = {}
    for library in SOURCES:
        for msg in extract(library):
            if msg.id in found:
                raise LibraryMessagesError(f"two messages share the id {msg.id}")
            found[msg.id] = msg
    return found


def find(line: str, messages) -> list[Message]:
    """The messages a pasted line holds, the one with the most literal text first."""
    hits = [m for m in messages if m.matches(line)]
    return sorted(hits, key=lambda m: -len(m.literal))


# ------------------------------------------------------------------ the site's rows

def load_data(path: Path) -> dict[str, dict]:
    try:
        data = yaml_load.load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise LibraryMessagesError(f"{Path(path).name}: not readable ({e})") from None
    if not isinstance(data, dict):
        raise LibraryMessagesError(f"{Path(path).name}: a mapping of message ids")
    for mid, row in data.items():
        if not isinstance(row, dict):
            raise LibraryMessagesError(f"{Path(path).name}: {mid}: a mapping")
        if "left_out" in row:
            reason = row["left_out"]
            if set(row) != {"left_out"} or not (
                    isinstance(reason, dict) and set(reason) == set(WORDS)
                    and all(isinstance(v, str) and v.strip() for v in reason.values())):
                raise LibraryMessagesError(f"{Path(path).name}: {mid}: `left_out` holds the reason "
                                           "in `en` and `es`, and nothing else")
            continue
        if not set(row) <= {"en", "es", "see"} or not all(
                isinstance(row.get(lang), str) and row[lang].strip() for lang in WORDS):
            raise LibraryMessagesError(f"{Path(path).name}: {mid}: needs `en` and `es` (and may "
                                       "have `see`), or `left_out`")
        if "see" in row and not re.fullmatch(r"[\w-]+\.md#[\w-]+", str(row["see"])):
            raise LibraryMessagesError(f"{Path(path).name}: {mid}: `see` is page.md#anchor")
    return data


def problems(found: dict[str, Message], data: dict[str, dict]) -> list[str]:
    """A message of the installed libraries the data lacks, or a row no library holds."""
    out = [f"data/library_messages.yml lacks {mid} ({m.library}: {m.text[:80]!r}, "
           f"{m.places[0].file}:{m.places[0].line}): say what to do, or why it is left out"
           for mid, m in found.items() if mid not in data]
    out += [f"data/library_messages.yml has {mid}, a message no installed library's recurrent "
            f"code holds now" for mid in data if mid not in found]
    return out


# Each library's source at the installed release, where a reader can read a message's code.
SOURCE_URLS = {
    "keras": "https://github.com/keras-team/keras/blob/v{version}/{file}#L{line}",
    "tf_keras": "https://github.com/keras-team/tf-keras/blob/v{version}/{file}#L{line}",
    "torch": "https://github.com/pytorch/pytorch/blob/v{version}/{file}#L{line}",
    "jax": "https://github.com/jax-ml/jax/blob/jax-v{version}/{file}#L{line}",
}


def installed_release(library: str) -> str:
    """The installed release, without a local build tag (2.14.1 for 2.14.1+cu130)."""
    from importlib.metadata import version
    return version(NAMES[library][1]).split("+")[0]


def source_url(library: str, place: Place) -> str:
    return SOURCE_URLS[library].format(version=installed_release(library), file=place.file,
                                       line=place.line)


def _code(text: str) -> str:
    """A code span for any text (backticks inside it included)."""
    text = " ".join(text.split())
    ticks = max((len(t) for t in re.findall(r"`+", text)), default=0) + 1
    pad = " " if text.startswith("`") or text.endswith("`") or ticks > 1 else ""
    return "`" * ticks + pad + text + pad + "`" * ticks


def _folder(library: str) -> str:
    """The folder all of a library's read files are in (keras/src/): places are named from it."""
    import os
    root, files = source_files(library)
    return os.path.commonpath([f.parent.relative_to(root).as_posix() for f in files]) + "/"


def _where(library: str, places: list[Place], lang: str) -> str:
    """The kind, the function and the library's condition, then each place, linked to the
    library's source at the installed release."""
    w = WORDS[lang]
    first = places[0]
    line = f"`{first.kind}` {w['in']} `{first.function}`"
    condition = ""
    if first.trigger:
        trigger = first.trigger if len(first.trigger) <= 140 else first.trigger[:137] + "..."
        condition = f", {w['when']} {_code(trigger)}"
    links, previous, folder = [], None, _folder(library)
    for p in places:
        label = f":{p.line}" if p.file == previous else f"{p.file.removeprefix(folder)}:{p.line}"
        links.append(f"[`{label}`]({source_url(library, p)})")
        previous = p.file
    # The condition and the places are read, not searched: a reader pastes the message (the
    # heading) and finds its row; left in, they made a sixth of each language's search index.
    return f"{line}<span data-search-exclude>{condition} ({', '.join(links)})</span>"


def render_library(library: str, messages: list[Message], data: dict[str, dict], lang: str) -> str:
    if library not in SOURCES:
        raise LibraryMessagesError(f"<!-- library-messages: {library} --> names no library "
                                   f"({', '.join(SOURCES)})")
    w = WORDS[lang]
    name = NAMES[library][0]
    rows = [m for m in messages if m.library == library and "left_out" not in data.get(m.id, {})]
    folder = _folder(library)
    package = SOURCES[library][0]
    out = [w["source"].format(name=name, version=installed_release(library)) + ": "
           + ", ".join(f"`{(package + '/' + g).removeprefix(folder)}`"
                       for g in SOURCES[library][1])
           + " " + w["under"].format(folder=f"`{folder}`") + "."]
    for m in rows:
        row = data.get(m.id)
        if row is None:
            continue
        advice = " ".join(row[lang].split())
        if row.get("see"):
            advice += f" [{w['see'].capitalize()}]({row['see']})."
        # What to do is read, not searched, like the condition: a pasted message finds its row
        # by the heading, and each language's search index has a size limit (120 KB gzipped).
        out.append(f"### {_code(m.text)} {{ #{m.id} }}\n\n{_where(library, m.places, lang)}"
                   f"<span data-search-exclude>. **{w['do']}** {advice}</span>")
    return "\n\n".join(out)


def render_left_out(messages: list[Message], data: dict[str, dict], lang: str) -> str:
    """The messages left out, each with its reason."""
    items = [f"- {NAMES[m.library][0]}: {_code(m.text)} "
             f"([`{m.places[0].file}:{m.places[0].line}`]({source_url(m.library, m.places[0])})): "
             f"{' '.join(data[m.id]['left_out'][lang].split())}"
             for m in messages if "left_out" in data.get(m.id, {})]
    return "\n".join(items)


def render(markdown: str, lang: str, root: Path) -> tuple[str, list[str]]:
    """The page with its library-messages markers drawn, and the problems found."""
    if not MARKER.search(markdown):
        return markdown, []
    found = extract_all()
    data = load_data(root / "data" / "library_messages.yml")
    issues = problems(found, data)
    lang = lang if lang in WORDS else "en"
    messages = list(found.values())

    def one(m: re.Match) -> str:
        if m.group(1) == "left_out":
            return render_left_out(messages, data, lang)
        try:
            return render_library(m.group(1), messages, data, lang)
        except LibraryMessagesError as e:
            issues.append(str(e))
            return m.group(0)
    return MARKER.sub(one, markdown), issues
