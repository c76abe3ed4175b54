-- House bots fill a table (docs/BOTS.md "House bots"): a game and level has as many
-- bots as the game has seats at most, each an account of its own (a seat is held by
-- one account), numbered from 1: instance 1 is `<game>-bot-<level>`, instance n > 1
-- is `<game>-bot-<level>-<n>`.
ALTER TABLE house_bots ADD COLUMN instance int NOT NULL DEFAULT 1 CHECK (instance BETWEEN 1 AND 9);
ALTER TABLE house_bots DROP CONSTRAINT house_bots_game_level_key;
ALTER TABLE house_bots ADD CONSTRAINT house_bots_game_level_instance_key UNIQUE (game, level, instance);
