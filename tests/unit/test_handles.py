"""Handles, casual names, account keys and who may do what (``service.domain.identity``),
and the lobby's seat draw (``service.domain.pipeline.draw_seats``)."""

from __future__ import annotations

import hashlib
import re

import pytest

from service.domain import identity, pipeline
from service.domain.identity import Account, GameAccess, Principal
from service.games.rng import Rng

GOOD_HANDLES = ["ann", "Ann", "a_b", "a-b", "abc", "x" * 24, "007", "___", "---", "Bob-the_2nd"]
BAD_HANDLES = [
    "",
    "ab",  # too short
    "x" * 25,  # too long
    "ann\n",  # a trailing newline: what a `$` let through
    "\nann",
    "ann ",
    " ann",
    "a.b",  # '.' is a name character, not a handle one
    "ａｎｎ",  # fullwidth look-alikes
    "аnn",  # Cyrillic a
    "ann\u200b",  # zero-width space
    "ann\x00",
    "ännа",
    "ann/../x",
    None,
    3,
    ["ann"],
]


@pytest.mark.parametrize("handle", GOOD_HANDLES)
def test_good_handles(handle):
    assert identity.valid_handle(handle)
    # Every handle is also a valid casual name.
    assert identity.valid_name(handle)


@pytest.mark.parametrize("handle", BAD_HANDLES)
def test_bad_handles(handle):
    assert not identity.valid_handle(handle)


@pytest.mark.parametrize("name", ["a", "cy", "p1", "a.b", "x" * 32, "ann-1"])
def test_casual_names_keep_the_documented_alphabet(name):
    assert identity.valid_name(name)


@pytest.mark.parametrize("name", ["", ".a", "-a", "x" * 33, "ann\n", "ann\r\n", "a b", "ａ", "a\x00"])
def test_bad_casual_names(name):
    assert not identity.valid_name(name)


def test_names_at_one_table_are_compared_ignoring_case():
    assert identity.same_name(["Ann", "bob", "ann", "BOB", "cy"]) == ["ann", "BOB"]
    assert identity.same_name(["ann", "bob"]) == []
    assert identity.handle_key("AnN-_1") == "ann-_1"


def test_keys_are_256_random_bits_with_a_prefix_and_stored_as_sha256():
    keys = {identity.new_key() for _ in range(200)}
    assert len(keys) == 200
    for key in keys:
        assert key.startswith(identity.KEY_PREFIX)
        body = key[len(identity.KEY_PREFIX) :]
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", body)  # 32 bytes, urlsafe base64 without padding
        assert identity.hash_key(key) == hashlib.sha256(key.encode()).digest()
        assert identity.looks_like_key(key)
    assert not identity.looks_like_key("x" * 43) and not identity.looks_like_key(None)
    h = identity.hash_key("qdk_x")
    assert identity.same_hash(h, hashlib.sha256(b"qdk_x").digest())
    assert not identity.same_hash(h, identity.hash_key("qdk_y"))


ANN = Principal(identity.ACCOUNT, Account("1", "ann", identity.PLAYER))
CUP = Principal(identity.ACCOUNT, Account("2", "cup-2027", identity.ORGANISER))
OTHER_CUP = Principal(identity.ACCOUNT, Account("3", "open-cup", identity.ORGANISER))
OPERATOR = Principal(identity.OPERATOR)
NOBODY = Principal(identity.NOBODY)


def test_organiser_rights_reach_only_the_games_it_created():
    game = GameAccess(("ann", "bob"), (True, True), created_by="Cup-2027", rated=True)
    assert identity.organises(OPERATOR, game)
    assert identity.organises(CUP, game)  # handles compare ignoring case
    assert not identity.organises(OTHER_CUP, game)
    assert not identity.organises(ANN, game)
    assert not identity.organises(NOBODY, game)
    # A game no organiser created: the operator only.
    old = GameAccess.from_created({"players": ["ann", "bob"]})
    assert old.accounts == (False, False) and old.created_by is None and not old.rated
    assert identity.organises(OPERATOR, old) and not identity.organises(CUP, old)
    # A player whose handle is the creator's is still no organiser.
    spoof = Principal(identity.ACCOUNT, Account("9", "cup-2027", identity.PLAYER))
    assert not identity.organises(spoof, game)
    assert identity.may_abort(CUP, game) and not identity.may_abort(OTHER_CUP, game)


def test_an_account_key_acts_only_for_a_seat_that_is_its_account():
    game = GameAccess(("bob", "Ann"), (True, True))
    assert identity.account_seat(ANN, game) == 1
    assert identity.account_seat(CUP, game) is None
    assert identity.account_seat(OPERATOR, game) is None
    # A seat held by the same name in a casual game is not the account's.
    casual = GameAccess(("ann", "bob"), (False, False))
    assert identity.account_seat(ANN, casual) is None


def test_the_seat_draw_is_a_permutation_drawn_from_the_seed_alone():
    joined = ["ann", "bob", "cy", "di"]
    seed = bytes(range(32))
    drawn = pipeline.draw_seats(seed, joined)
    assert sorted(drawn) == sorted(joined)
    assert drawn == pipeline.draw_seats(seed, joined)  # deterministic
    # Exactly Fisher-Yates over the dedicated domain (docs/RNG.md).
    assert drawn == Rng(seed, domain=pipeline.SEATING_DOMAIN).shuffled(joined)
    orders = {tuple(pipeline.draw_seats(bytes([i]) * 32, joined)) for i in range(64)}
    assert len(orders) > 10  # the seed decides, not the join order


def test_opening_terms_give_back_what_opened_the_game():
    created = pipeline.created_data(
        ["bob", "ann"], "nauticus", "1.0.0", {}, "c" * 64, rated=True, accounts=[True, True], joined=["ann", "bob"]
    )
    players, terms = pipeline.opening_terms(created)
    assert players == ["ann", "bob"]
    assert terms == {"rated": True, "accounts": [True, True], "draw": True}
    # A game without terms opens exactly as before accounts existed.
    plain = pipeline.created_data(["ann", "bob"], "nauticus", "1.0.0", {}, "c" * 64, rated=None)
    assert set(plain) == {"game", "rules_version", "players", "options", "seed_commitment"}
    assert pipeline.opening_terms(plain) == (["ann", "bob"], {})
