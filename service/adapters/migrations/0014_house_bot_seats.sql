-- House bots fill a table (docs/BOTS.md "House bots"): a game and level has as many
-- bots as the game has seats at most, each an account of its own (a seat is held by
-- one account), numbered from 1: instance 1 is `<game>-bot-<level>`, instance n > 1
-- is `<game>-bot-<level>-<n>`.
ALTER TABLE house_bots ADD COLUMN instance int NOT NULL DEFAULT 1 CHECK (instance BETWEEN 1 AND 9);
ALTER TABLE house_bots DROP CONSTRAINT house_bots_game_level_key;
ALTER TABLE house_bots ADD CONSTRAINT house_bots_game_level_instance_key UNIQUE (game, level, instance);

-- The tables whose house bots may still be playing (docs/BOTS.md "What bots cost"): set
-- when a bot is seated, cleared once its table is seen closed or its game finished, so
-- counting an account's unfinished tables with bots reads those and no others.
ALTER TABLE lobby_tables ADD COLUMN bots_busy boolean NOT NULL DEFAULT false;
CREATE INDEX lobby_tables_bots_busy ON lobby_tables (creator_id) WHERE bots_busy;
