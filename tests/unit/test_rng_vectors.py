"""docs/RNG.md's test vectors against service/games/rng.py.

The test PARSES the document's tables, so the published page and the code
cannot drift apart.  Regenerate the tables (after a deliberate change of the
generator, which would also need a new LABEL) with::

    python tests/unit/test_rng_vectors.py > /tmp/vectors.md
"""

from __future__ import annotations

import hashlib
import hmac
import pathlib
import re

import pytest
from support.markdown import tables

from service.games.rng import LABEL, Rng, commitment

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "RNG.md"

SEEDS = {
    "zero": bytes(32),
    "ones": b"\xff" * 32,
    "count": bytes(range(32)),
    "word": hashlib.sha256(b"quarterdeck").digest(),
}
BLOCK_CASES = [("zero", 0, 0), ("zero", 0, 1), ("zero", 1, 0), ("ones", 7, 3), ("count", 2, 0), ("word", 42, 9)]
RANDBELOW_CASES = [("zero", 0, 6), ("count", 5, 52), ("word", 1, 1), ("ones", 3, 2**63 + 1), ("word", 9, 2**64)]
SHUFFLE_CASES = [("count", 1, 10), ("word", 17, 12)]
DRAW_CASES = [("zero", 3, 10, 4), ("word", 8, 6, 6)]
COUNT = 5


def generate() -> str:
    """The vector tables of docs/RNG.md, from the implementation."""
    out = ["#### Seeds", "", "| name | seed (hex) | commitment = sha256(seed) |", "| --- | --- | --- |"]
    out += [f"| {n} | `{s.hex()}` | `{commitment(s)}` |" for n, s in SEEDS.items()]
    out += ["", "#### Blocks", "", "| seed | domain | counter | block (hex) |", "| --- | --- | --- | --- |"]
    for name, domain, counter in BLOCK_CASES:
        out.append(f"| {name} | {domain} | {counter} | `{Rng(SEEDS[name], domain, counter).block().hex()}` |")
    out += [
        "",
        "#### randbelow",
        "",
        "Five successive calls from counter 0; `counter after` shows the blocks used (rejections included).",
        "",
        "| seed | domain | n | outputs | counter after |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, domain, n in RANDBELOW_CASES:
        rng = Rng(SEEDS[name], domain)
        values = [rng.randbelow(n) for _ in range(COUNT)]
        out.append(f"| {name} | {domain} | {n} | {', '.join(map(str, values))} | {rng.counter} |")
    out += ["", "#### shuffle", "", "| seed | domain | input | output |", "| --- | --- | --- | --- |"]
    for name, domain, size in SHUFFLE_CASES:
        result = Rng(SEEDS[name], domain).shuffled(list(range(size)))
        out.append(f"| {name} | {domain} | 0..{size - 1} | {', '.join(map(str, result))} |")
    out += [
        "",
        "#### draw",
        "",
        "| seed | domain | bag | k | drawn | bag after |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, domain, size, k in DRAW_CASES:
        bag = list(range(size))
        drawn = Rng(SEEDS[name], domain).draw(bag, k)
        out.append(
            f"| {name} | {domain} | 0..{size - 1} | {k} | {', '.join(map(str, drawn))} | {', '.join(map(str, bag))} |"
        )
    return "\n".join(out) + "\n"


# -- parsing the document -----------------------------------------------------


def ints(cell: str) -> list[int]:
    cell = cell.strip()
    m = re.fullmatch(r"(\d+)\.\.(\d+)", cell)
    if m:
        return list(range(int(m[1]), int(m[2]) + 1))
    return [int(x) for x in cell.split(",")] if cell else []


@pytest.fixture(scope="module")
def doc() -> dict[str, list[dict[str, str]]]:
    return tables(DOC.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def seeds(doc) -> dict[str, bytes]:
    return {row["name"]: bytes.fromhex(row["seed (hex)"]) for row in doc["Seeds"]}


def test_document_has_every_table(doc):
    for name in ("Seeds", "Blocks", "randbelow", "shuffle", "draw"):
        assert doc.get(name), f"docs/RNG.md has no '#### {name}' vector table"
    assert len(doc["Blocks"]) >= 5 and len(doc["randbelow"]) >= 4


def test_seed_commitments(doc, seeds):
    for row in doc["Seeds"]:
        assert commitment(seeds[row["name"]]) == row["commitment = sha256(seed)"]


def test_blocks(doc, seeds):
    for row in doc["Blocks"]:
        seed, domain, counter = seeds[row["seed"]], int(row["domain"]), int(row["counter"])
        assert Rng(seed, domain, counter).block().hex() == row["block (hex)"], row
        # ...and the block is exactly the HMAC the page defines.
        msg = LABEL + domain.to_bytes(8, "big") + counter.to_bytes(8, "big")
        assert hmac.new(seed, msg, hashlib.sha256).hexdigest() == row["block (hex)"]


def test_randbelow(doc, seeds):
    for row in doc["randbelow"]:
        rng = Rng(seeds[row["seed"]], int(row["domain"]))
        n = int(row["n"])
        assert [rng.randbelow(n) for _ in range(COUNT)] == ints(row["outputs"]), row
        assert rng.counter == int(row["counter after"]), row


def test_a_rejection_is_published(doc):
    """At least one vector must exercise rejection sampling (more blocks than calls)."""
    assert any(int(r["counter after"]) > COUNT for r in doc["randbelow"])


def test_shuffle(doc, seeds):
    for row in doc["shuffle"]:
        out = Rng(seeds[row["seed"]], int(row["domain"])).shuffled(ints(row["input"]))
        assert out == ints(row["output"]), row


def test_draw(doc, seeds):
    for row in doc["draw"]:
        bag = ints(row["bag"])
        drawn = Rng(seeds[row["seed"]], int(row["domain"])).draw(bag, int(row["k"]))
        assert drawn == ints(row["drawn"]), row
        assert bag == ints(row["bag after"]), row


def test_document_tables_are_what_the_generator_prints():
    """The whole vector section equals a fresh generation (nothing hand-edited)."""
    text = DOC.read_text(encoding="utf-8")
    assert generate() in text


def test_reference_reimplementation_matches():
    """The page's pseudo-code, written out independently, agrees with rng.py."""

    def block(seed: bytes, domain: int, counter: int) -> bytes:
        return hmac.new(
            seed, b"quarterdeck-rng-v1" + domain.to_bytes(8, "big") + counter.to_bytes(8, "big"), "sha256"
        ).digest()

    def randbelow(seed: bytes, domain: int, counter: int, n: int) -> tuple[int, int]:
        limit = 2**64 - (2**64 % n)
        while True:
            x = int.from_bytes(block(seed, domain, counter)[:8], "big")
            counter += 1
            if x < limit:
                return x % n, counter

    seed = SEEDS["word"]
    rng = Rng(seed, 11)
    counter = 0
    for n in (1, 2, 3, 7, 52, 1000, 2**63 + 1, 2**64):
        value, counter = randbelow(seed, 11, counter, n)
        assert rng.randbelow(n) == value
        assert rng.counter == counter


if __name__ == "__main__":
    print(generate(), end="")
