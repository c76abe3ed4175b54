"""Waters of Nereus (Dr. Finn's Games, 2018): the pure rules engine.  Exposes ``ENGINE``."""

from service.games.waters_of_nereus.engine import WatersOfNereus

ENGINE = WatersOfNereus()

__all__ = ["ENGINE", "WatersOfNereus"]
