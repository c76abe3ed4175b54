"""Reading the docs' markdown from tests."""

from __future__ import annotations


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
