"""A page's Markdown as the blocks a reader reads, for the checks of what pages claim
(pipeline/claims/release_numbers.py, pipeline/claims/measured.py, pipeline/claims/messages.py).

A block is a paragraph, a list item, a table row, a blockquote, a heading or the title of an
admonition or content tab. Each block carries its `scope`: the text where the source of what it
says may sit. For a paragraph or a list item that is the block itself; for a table
row, the row and the paragraph just above the table (its caption); for a heading, its whole
section (up to the next heading); for an admonition or tab title, its body; a blockquote's
scope also holds the paragraph just before it (the one that says whose words they are).

Code blocks are not prose: they are snippets the build runs. A ```dot diagram is, though: its
labels are what the reader reads, so each diagram is one block. HTML comments (the build's
markers) are blanked, keeping line numbers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
COMMENT = re.compile(r"<!--.*?-->", re.S)
HEADING = re.compile(r"^#{1,6}\s")
TITLED = re.compile(r'^\s*(?:!!!|\?\?\?\+?|===)\s*(?:[\w-]+(?:\s+[\w-]+)*)?\s*(?:"([^"]*)")?\s*$')
ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
ROW = re.compile(r"^\s*\|")
QUOTE = re.compile(r"^\s*>")
DOT_TEXT = re.compile(r'(?:label|tooltip|graph|digraph)\s*=?\s*"([^"]*)"')
# A link to another site: [text](https://...) or <https://...>
EXTERNAL_LINK = re.compile(r"\]\((https?://[^)\s]+)[^)]*\)|<(https?://[^>\s]+)>")


@dataclass
class Block:
    kind: str   # paragraph, item, row, quote, heading, title, diagram
    text: str   # the block's own text, markers blanked
    line: int   # 1-based line of its first line in the page
    scope: str  # where its source may be: see the module's docstring

    def links(self) -> list[str]:
        """The links to other sites in the block's scope."""
        return [a or b for a, b in EXTERNAL_LINK.findall(self.scope)]


def blank_comments(markdown: str) -> str:
    """HTML comments replaced by spaces (their newlines kept)."""
    return COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), markdown)


def _lines(markdown: str) -> list[tuple[str, str]]:
    """Each line with its kind: 'text', 'code' (inside a fence, the fence lines included) or
    'dot' (inside a ```dot fence)."""
    out, fence, kind = [], None, "text"
    for line in markdown.split("\n"):
        m = FENCE.match(line)
        if fence is None and m:
            fence = (m.group(2)[0], len(m.group(2)))
            kind = "dot" if m.group(3).strip().split(" ")[0].strip("{. ") == "dot" else "code"
            out.append((line, "code"))
            continue
        if fence is not None:
            if m and m.group(2)[0] == fence[0] and len(m.group(2)) >= fence[1] \
                    and not m.group(3).strip():
                fence = None
                out.append((line, "code"))
                continue
            out.append((line, kind))
            continue
        out.append((line, "code" if line.lstrip().startswith("--8<--") else "text"))
    return out


def blocks(markdown: str) -> list[Block]:
    """The page's prose blocks, in order (see the module's docstring)."""
    lines = _lines(blank_comments(markdown))
    found: list[Block] = []
    i = 0
    while i < len(lines):
        line, kind = lines[i]
        if kind == "dot":
            start = i
            while i < len(lines) and lines[i][1] == "dot":
                i += 1
            # what the reader reads: the graph's name, its labels and tooltips
            text = "\n".join(" ".join(DOT_TEXT.findall(l)) for l, _ in lines[start:i])
            found.append(Block("diagram", text, start + 1, text))
            continue
        if kind == "code" or not line.strip():
            i += 1
            continue
        if HEADING.match(line):
            end = i + 1
            while end < len(lines) and not (lines[end][1] == "text"
                                            and HEADING.match(lines[end][0])):
                end += 1
            scope = "\n".join(l for l, k in lines[i:end] if k == "text")
            found.append(Block("heading", line, i + 1, scope))
            i += 1
            continue
        titled = TITLED.match(line)
        if titled and titled.group(1) is not None:
            indent = len(line) - len(line.lstrip())
            end = i + 1
            while end < len(lines) and (not lines[end][0].strip()
                                        or len(lines[end][0]) - len(lines[end][0].lstrip()) > indent):
                end += 1
            body = "\n".join(l for l, k in lines[i + 1:end] if k == "text")
            found.append(Block("title", titled.group(1), i + 1, body))
            i += 1
            continue
        if titled:  # an admonition without a title: its body is read as blocks
            i += 1
            continue
        if ROW.match(line):
            start = i
            while start > 0 and ROW.match(lines[start - 1][0]) and lines[start - 1][1] == "text":
                start -= 1
            caption_end = start
            while caption_end > 0 and not lines[caption_end - 1][0].strip():
                caption_end -= 1
            caption_start = caption_end
            while caption_start > 0 and lines[caption_start - 1][0].strip() \
                    and lines[caption_start - 1][1] == "text" \
                    and not ROW.match(lines[caption_start - 1][0]):
                caption_start -= 1
            caption = "\n".join(l for l, _ in lines[caption_start:caption_end])
            found.append(Block("row", line, i + 1, line + "\n" + caption))
            i += 1
            continue
        block_kind = "quote" if QUOTE.match(line) else "item" if ITEM.match(line) else "paragraph"
        start = i
        i += 1
        while i < len(lines):
            nxt, nkind = lines[i]
            if nkind != "text" or not nxt.strip() or HEADING.match(nxt) or ROW.match(nxt) \
                    or TITLED.match(nxt) or ITEM.match(nxt) \
                    or bool(QUOTE.match(nxt)) != bool(QUOTE.match(line)):
                break
            i += 1
        text = "\n".join(l for l, _ in lines[start:i])
        scope = text
        if block_kind == "quote" and found and found[-1].kind == "paragraph" \
                and found[-1].line + found[-1].text.count("\n") + 2 >= start:
            scope = found[-1].text + "\n" + text  # the paragraph that introduces the quote
        found.append(Block(block_kind, text, start + 1, scope))
    return found


def plain(text: str) -> str:
    """A block's words as a reader sees them: link targets, attribute lists ({ #id }), HTML tags
    and Markdown emphasis dropped; code spans keep their text."""
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<https?://[^>]*>", " ", text)
    text = re.sub(r"\{\s*[#.:][^}]*\}", " ", text)
    text = re.sub(r"<[^>\n]+>", " ", text)
    return text
