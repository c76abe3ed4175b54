"""Reading the docs' markdown from tests."""

from __future__ import annotations

import re


def tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Every markdown table under a ``#### <name>`` heading, as rows of cells."""
    found: dict[str, list[dict[str, str]]] = {}
    heading = None
    header: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("#### "):
            heading, header = line[5:].strip(), None
            continue
        if not line.startswith("|") or heading is None:
            header = None if not line.startswith("|") else header
            continue
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            found[heading] = []
        elif set(cells[0]) <= {"-", " ", ":"}:
            continue
        else:
            found[heading].append(dict(zip(header, cells, strict=True)))
    return found


def _lines_outside_fences(text: str) -> tuple[list[str], list[str]]:
    """(lines outside fenced code blocks, lines inside them)."""
    outside: list[str] = []
    inside: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif fence is not None and stripped.startswith(fence):
            fence = None
        elif fence is None:
            outside.append(line)
        else:
            inside.append(line)
    return outside, inside


def code_spans(text: str) -> list[str]:
    """Every inline code span, and every line of every fenced code block."""
    outside, inside = _lines_outside_fences(text)
    spans = [m.group(2) for line in outside for m in re.finditer(r"(`+)(.+?)\1", line)]
    return spans + inside


def links(text: str) -> list[str]:
    """The targets of the page's markdown links and images (outside code)."""
    outside, _ = _lines_outside_fences(text)
    prose = "\n".join(re.sub(r"(`+).+?\1", "", line) for line in outside)
    return re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose)


def headings_anchors(text: str) -> set[str]:
    """The anchors GitHub gives the page's headings (lower case, punctuation but
    ``-`` and ``_`` dropped, blanks as ``-``, repeats numbered), and explicit
    ``<a id=...>`` / ``<a name=...>`` anchors."""
    outside, _ = _lines_outside_fences(text)
    found: set[str] = set(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", text))
    seen: dict[str, int] = {}
    for line in outside:
        m = re.match(r"#{1,6} (.+?)\s*#*\s*$", line)
        if not m:
            continue
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))  # a link's text only
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found
