"""Nautilus Industries in words (events: docs/games/nautilus-industries.md)."""

from typing import Any

NAMES: dict[str, str] = {
    # colours = companies = commodities
    "Y": "gold",
    "B": "blue",
    "K": "black",
    "O": "orange",
    "G": "green",
}

SENTENCES: dict[str, str | list[str]] = {
    "GameStarted": "A game of Nautilus Industries for {players} players began",
    "FirstPlayerChosen": "{seat:player} was drawn as first player",
    "MarkersSetAside": "The stock and commodity marker gems were set aside",
    "GemsDrawn": ["Zone {tile:num1} received {gems:tally}", "Zone {tile:num1} received no gems"],
    "CommodityValuesSet": "The commodity values were set: {values:values}",
    "RoundStarted": "Round {round} began; {first:player} is first player",
    "SubPlaced": "{seat:player} placed a sub on the {colour:name} spot of zone {tile:num1}",
    "SubUpgraded": "{seat:player} paid ${cost} to upgrade that sub with {upgrade:a} gem",
    "UpgradeDeclined": "{seat:player} did not upgrade the sub",
    "WarehouseUpgraded": "{seat:player} upgraded the warehouse to capacity {capacity}",
    "GemChosen": "{seat:player} picked the {colour:name} gem of zone {tile:num1} to switch",
    "GemsSwitched": "{seat:player} switched {colour_a:a} gem of zone {tile_a:num1} with {colour_b:a} gem "
    "of zone {tile_b:num1}",
    "TilesSwitched": "{seat:player} switched the mining order of zones {tile_a:num1} and {tile_b:num1}",
    "StockPurchased": "{seat:player} bought the {shares}-share {company:name} certificate for ${price}",
    "ActionForfeited": "{seat:player} had no legal action and lost it",
    "MarketPhaseStarted": "Round {round}: the market phase began",
    "TileResolutionStarted": "Zone {tile:num1}, in position {position:num1}, was mined",
    "SubCollected": [
        "{seat:player}'s sub on {colour:name} collected {own:n:gem/gems} and {upgrade_gems} {upgrade:name} with "
        "its upgrade",
        "{seat:player}'s sub on {colour:name} collected {own:n:gem/gems}",
    ],
    "SellTurnStarted": "{seat:player} may sell or hold",
    "GemsSold": "{seat:player} sold {count} {colour:name} at ${price} for ${money}",
    "GemsHeld": "{seat:player} held {gems:counts}",
    "MarketAdjusted": "{colour:name}: {sold} sold; commodity value {commodity_before} to {commodity_after}, "
    "stock space {stock_before} to {stock_after}",
    "SoldGemsReturned": "The sold gems went back into the bag: {gems:counts}",
    "UpkeepPhaseStarted": "Round {round}: upkeep",
    "GameEndTriggered": "The {colours:name} stock marker reached the top of its chart: the game ends",
    "FinalSale": "{seat:player} sold {gems:counts} in the final sale for ${money}",
    "GameEnded": "The game ended; {result:winner} won",
    "SeatForfeited": "{seat:player} left the game",
}


# -- intents: what the seat may do, in words (the actions panel of the game page) --------------
def intent_targets(intent: dict[str, Any], view: dict[str, Any], seat: int) -> list[str]:
    """The board's elements an intent names (``data-target`` in ``boards/nautilus-industries.html``)."""
    kind = intent.get("type")
    if kind in ("place_sub", "switch_gem_from", "switch_gem_with"):
        return [f"spot:{intent['tile']}:{intent['colour']}"]
    if kind == "switch_tiles":
        return [f"zone:{intent['tile_a']}", f"zone:{intent['tile_b']}"]
    if kind == "buy_stock":
        return [f"cert:{intent['company']}:{intent['shares']}"]
    return []


INTENTS: dict[str, dict[str, Any]] = {
    "place_sub": {
        "group": "Place a sub",
        "text": "Place a sub on the {colour:name} spot of zone {tile:num1}",
        "steps": ["Zone {tile:num1}", "{colour:name} spot"],
    },
    "upgrade_sub": {"group": "Upgrade the sub", "text": "Pay $5: upgrade the sub with {colour:a} gem"},
    "decline_upgrade": {"group": "Upgrade the sub", "text": "Leave the sub without an upgrade"},
    "upgrade_warehouse": {"group": "Upgrade the warehouse", "text": "Upgrade the warehouse by 1"},
    "switch_gem_from": {
        "group": "Switch two gems",
        "text": "Pick the {colour:name} gem of zone {tile:num1}",
        "steps": ["Zone {tile:num1}", "{colour:name} gem"],
    },
    "switch_gem_with": {
        "group": "Switch two gems",
        "text": "Switch it with the {colour:name} gem of zone {tile:num1}",
        "steps": ["Zone {tile:num1}", "{colour:name} gem"],
    },
    "switch_tiles": {
        "group": "Switch the mining order",
        "text": "Switch the mining order of zones {tile_a:num1} and {tile_b:num1}",
        "steps": ["Zone {tile_a:num1}", "with zone {tile_b:num1}"],
    },
    "buy_stock": {
        "group": "Buy stock",
        "text": "Buy the {shares}-share {company:name} certificate",
        "steps": ["{company:name}", "{shares}-share certificate"],
    },
    "sell": {"group": "Sell or hold", "text": "Sell {count} {colour:name}", "steps": ["{colour:name}", "{count}"]},
    "hold": {"group": "Sell or hold", "text": "Hold the remaining gems"},
}
