-- House bots (docs/BOTS.md "House bots"): accounts of a third kind, "bot",
-- one per game and level, provisioned by the operator (`make bots`,
-- service/adapters/house_bots.py).  A bot is an account like any other: it sits
-- at tables, is seated by handle, is rated, and acts with its own key, which
-- is derived from the operator's bot secret and kept nowhere in clear.
ALTER TABLE accounts DROP CONSTRAINT accounts_kind_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_check CHECK (kind IN ('player', 'organiser', 'bot'));

-- Which game and level each house bot plays (one bot per game and level).
CREATE TABLE house_bots (
    account_id uuid PRIMARY KEY REFERENCES accounts (account_id),
    game       text NOT NULL,
    level      int NOT NULL CHECK (level BETWEEN 1 AND 9),
    UNIQUE (game, level)
);
