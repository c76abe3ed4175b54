"""Nauticus as a client reads it: events, view, result (see ``schemas/games/__init__.py``).

Nauticus has no hidden information: every viewer gets every event and the
whole state (the rules reference, docs/rules/nauticus.md, NAU-005).
"""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.games import (
    boolean,
    counts,
    forfeited_field,
    integer,
    listing,
    nested,
    result_fields,
    schema,
    seat,
    string,
)
from service.games.nauticus import data as D

_ITEM = D.ALL_ITEMS
_ACTION = D.ACTIONS
_SPACE = validate.Range(min=0, max=D.SPACES - 1)


def _space(description: str = "An action space, 0-7.", **kw) -> fields.Integer:
    return fields.Integer(strict=True, validate=_SPACE, metadata={"description": description}, **kw)


# -- events -------------------------------------------------------------------
_StartSeat = schema("NauticusStartSeat", "A seat's opening supply.", taler=integer(), workers=integer(), vp=integer())

EVENTS: dict[str, type[Schema]] = {
    "GameStarted": schema(
        "NauticusGameStarted",
        "Setup: player count, rounds, the start player, the turntable and each seat's supply.",
        players=integer(),
        rounds=integer("Rounds this game lasts (by player count)."),
        start_player=seat(),
        turntable_anchor=integer("The turntable segment the anchor points at."),
        seats=listing(fields.Nested(_StartSeat)),
        stacks=counts(_ITEM, "Items left in the general supply."),
    ),
    "ActionTilesLaidOut": schema(
        "NauticusActionTilesLaidOut",
        "A round's layout: which action tile lies on which space, and the blue workers per space.",
        round=integer(),
        turntable_anchor=integer(),
        order=listing(string(_ACTION), "The order the tiles were drawn in."),
        layout=listing(string(_ACTION), "The action on each space 0-7."),
        blue=listing(fields.Integer(strict=True), "Blue workers on each space 0-7."),
    ),
    "ActionChosen": schema(
        "NauticusActionChosen",
        "The start player chose an action space; its bonus went to the chooser.",
        seat=seat(),
        space=_space(required=True),
        action=string(_ACTION),
        blue=integer("Blue workers each player gets for this action."),
        bonus_workers=integer(),
        bonus_vp=integer(),
        bonus_taler=integer(),
        bonus_item=string(["", *_ITEM], "The bonus item taken, or '' for none."),
        bonus_forfeited=boolean("The bonus could not be taken (no room or none left)."),
    ),
    "ActionPassed": schema(
        "NauticusActionPassed",
        "A player passed this action phase and took a pass tile.",
        seat=seat(),
        pass_tile=integer("Victory points of the pass tile (0 or negative)."),
    ),
    "ItemBought": schema(
        "NauticusItemBought",
        "An item was bought and put in the warehouse or on a ship.",
        seat=seat(),
        item=string(_ITEM),
        price=integer("Taler paid."),
        blue=boolean("Paid with a blue worker."),
        to=string(["warehouse", "new_ship", "ship"]),
        ship=integer("The ship it went to (when `to` is a ship)."),
        position=integer("The hull position (for hull parts)."),
        extra=boolean("Bought in the extra action."),
    ),
    "GiftTaken": schema("NauticusGiftTaken", "The free gift item was taken.", seat=seat(), item=string(_ITEM)),
    "GiftForfeited": schema("NauticusGiftForfeited", "The gift was forfeited (nothing could be taken).", seat=seat()),
    "TileTransported": schema(
        "NauticusTileTransported",
        "An item moved from the warehouse to a ship.",
        seat=seat(),
        item=string(_ITEM),
        blue=boolean(),
        to=string(["new_ship", "ship"]),
        ship=integer(),
        position=integer(),
    ),
    "MoneyWithdrawn": schema(
        "NauticusMoneyWithdrawn", "Taler taken from the bank.", seat=seat(), taler=integer(), blue=boolean()
    ),
    "GoodsDelivered": schema(
        "NauticusGoodsDelivered",
        "A ship's goods were delivered.",
        seat=seat(),
        ship=integer(),
        goods=listing(string(D.GOODS)),
        blue=integer("Blue workers used."),
        own=integer("Own workers used."),
    ),
    "CrownsScored": schema(
        "NauticusCrownsScored",
        "Crowns were scored as victory points.",
        seat=seat(),
        crowns=integer(),
        vp=integer(),
        blue=boolean(),
        wasted=boolean("Some crowns scored nothing (the per-round cap)."),
    ),
    "ShipCompleted": schema(
        "NauticusShipCompleted",
        "A ship was completed; its owner now chooses `rewards` rewards.",
        seat=seat(),
        ship=integer(),
        rewards=integer(),
    ),
    "RewardTaken": schema(
        "NauticusRewardTaken",
        "A ship reward was taken.",
        seat=seat(),
        reward=string(D.REWARDS),
        goods=listing(string(D.GOODS), "The goods chosen (reward `goods` only)."),
    ),
    "ExtraActionStarted": schema(
        "NauticusExtraActionStarted",
        "The extra action tile was played.",
        seat=seat(),
        action=string(_ACTION),
        workers=integer("Workers gained."),
    ),
    "ExtraActionEnded": schema("NauticusExtraActionEnded", "The extra action is over.", seat=seat()),
    "TurnEnded": schema(
        "NauticusTurnEnded",
        "A player's turn in this action phase ended.",
        seat=seat(),
        next=seat(allow_none=True, description="Who acts next in this phase, or null when the phase ends."),
    ),
    "PhaseEnded": schema(
        "NauticusPhaseEnded",
        "An action phase ended; the start player passes on.",
        round=integer(),
        phase=integer(),
        space=_space(required=True),
        anchor_tile=fields.Integer(required=True, allow_none=True, strict=True),
        start_player=seat(),
    ),
    "SeatForfeited": schema(
        "NauticusSeatForfeited",
        "A seat left the game (resigned or ran out of time); it keeps what it owns, out of play.",
        seat=seat(),
        start_player=seat(required=False, description="The new start player, when the seat held the figure."),
    ),
    "RoundEnded": schema(
        "NauticusRoundEnded",
        "A round ended; unused workers cost victory points.",
        round=integer(),
        penalties=listing(fields.Integer(strict=True), "Victory points lost, by seat."),
    ),
}

# -- result -------------------------------------------------------------------
_Breakdown = schema(
    "NauticusBreakdown",
    "One seat's final score, by category (docs/rules/nauticus.md, final scoring).",
    track=integer("Victory points on the track."),
    delivered_goods=integer(),
    completed_ships=integer(),
    remaining_material_vp=integer(),
    material_taler=integer(),
    taler_total=integer(),
    remainder=integer("Taler left over (the tie-break)."),
    total=integer(),
)

RESULT = schema(
    "NauticusResult",
    "The result of a finished Nauticus game.",
    **result_fields(_Breakdown, string(description="Which tie-break decided, or null.", allow_none=True)),
)

EVENTS["GameEnded"] = schema(
    "NauticusGameEnded", "Final scoring: the result (also in GameFinished).", result=nested(RESULT)
)

# -- view ---------------------------------------------------------------------
_Ship = schema(
    "NauticusShip",
    "A ship: its hull parts, and what its slots hold (null: empty).",
    hull=listing(string(D.HULL_PARTS)),
    masts=listing(fields.String(allow_none=True)),
    sails=listing(fields.String(allow_none=True)),
    goods=listing(fields.String(allow_none=True)),
    complete=boolean(),
)

_SeatView = schema(
    "NauticusSeat",
    "One player's board.",
    taler=integer(),
    workers=integer(),
    vp=integer(),
    warehouse=counts(_ITEM, "Items in the warehouse."),
    wh_used=integer("Warehouse spaces used (masts take 2)."),
    ships=listing(fields.Nested(_Ship)),
    delivered=counts(D.GOODS, "Goods delivered so far."),
    passes=integer(),
    extra_tile=boolean("Still holds the extra action tile."),
    crown_vp_round=integer("Crown victory points scored this round."),
    crowns=integer("Crowns on completed ships (derived)."),
)

_Act = schema(
    "NauticusAct",
    "One carrying-out of an action (the board action, or the extra action).",
    action=string(_ACTION),
    is_extra=boolean(),
    blue=integer("Blue workers left for this turn."),
    uses=integer(),
    bought=counts(_ITEM, "Copies bought in this action."),
    gift=integer("0: not earned, 1: pending, 2: taken or forfeited."),
    crown_vp=integer(),
    done=boolean(),
)

_Rewards = schema(
    "NauticusPendingRewards",
    "Ship rewards still to choose.",
    ship=integer(),
    left=integer(),
    taken=counts(D.REWARDS),
)

_Turn = schema(
    "NauticusTurn",
    "The acting player's turn.",
    main=nested(_Act),
    extra=nested(_Act, allow_none=True),
    rewards=nested(_Rewards, allow_none=True),
)

VIEW = schema(
    "NauticusView",
    "The whole Nauticus state (nothing is hidden), plus derived numbers.",
    game=string(["nauticus"]),
    players=integer(),
    rounds=integer(),
    round=integer(),
    phase=integer(),
    step=string(["choose", "act", "over"], "'choose': the start player picks a space; 'act': `acting` acts."),
    start_player=seat(),
    turntable_anchor=integer(),
    layout=listing(string(_ACTION), "The action on each space 0-7."),
    face_down=listing(boolean(), "Spaces whose tile is face down for the rest of the round."),
    anchor_tile=fields.Integer(required=True, allow_none=True, strict=True),
    space=_space("The space chosen this phase, or null.", required=True, allow_none=True),
    blue=integer("Blue workers of the chosen space."),
    acting=seat(allow_none=True, description="Who is carrying out the action now, or null."),
    stacks=counts(_ITEM, "Items left in the general supply."),
    seats=listing(fields.Nested(_SeatView)),
    turn=nested(_Turn, allow_none=True),
    result=nested(RESULT, allow_none=True),
    forfeited=forfeited_field(),
    viewer=fields.Raw(
        required=True, allow_none=True, metadata={"description": "The seat, 'admin' or null (spectator)."}
    ),
    blue_by_space=listing(fields.Integer(strict=True), "Blue workers on each space this round."),
    prices_by_space=listing(fields.List(fields.Integer(strict=True)), "Item prices beside each space."),
)
