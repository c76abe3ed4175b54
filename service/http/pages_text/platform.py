"""Sentences of the platform's own events (``service/domain/pipeline.py``), shared by every game."""

NAMES: dict[str, str] = {}

SENTENCES: dict[str, str | list[str]] = {
    "GameCreated": [
        "The table was set for {players:player_names}; the seed's commitment {seed_commitment:short} was published",
        "The table was set; the seed's commitment was published",
    ],
    "SeatResigned": "{seat:player} resigned",
    "SeatTimedOut": "{seat:player} ran out of time and was forfeited",
    "GameAborted": ["The game was aborted: {reason}", "The game was aborted"],
    "GameFinished": [
        "The game finished, {result:winner} first; the seed {seed:short} was revealed",
        "The game finished; the seed {seed:short} was revealed",
        "The game finished",
    ],
}
