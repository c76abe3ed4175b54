-- Tournaments (docs/TOURNAMENTS.md, issue 18): a stream of their own kind in
-- the same store, kept in tables of their own so that nothing that reads game
-- streams (projections, the global feed, rebuilds, audits) ever meets one.
--
-- The stream has the shape of a game's: dense seq from 1, primary key
-- (tournament_id, seq) for optimistic concurrency, the same salted digests and
-- hash chain (service/domain/canonical.py, with the tournament id where a game's
-- id goes), append-only, and a global (tx_id, position) order read only below
-- the oldest running transaction (the late-commit gap, migration 0001).
-- 0004 and 0005 were never used; 0007 keeps this after 0006.

CREATE TABLE tournaments (
    tournament_id   uuid PRIMARY KEY,
    name            text NOT NULL,
    game            text NOT NULL,
    -- The organiser's handle; NULL: created by the operator (ADMIN_TOKEN).
    organiser       text,
    seed_commitment text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tournaments_created ON tournaments (created_at DESC);

-- The secret seed, apart from the stream like game_seeds: only its sha256 is
-- in TournamentCreated; TournamentFinished reveals it.
CREATE TABLE tournament_seeds (
    tournament_id uuid PRIMARY KEY REFERENCES tournaments (tournament_id),
    seed          bytea NOT NULL CHECK (length(seed) = 32)
);

CREATE TABLE tournament_events (
    tournament_id  uuid NOT NULL REFERENCES tournaments (tournament_id),
    seq            int NOT NULL CHECK (seq >= 1),
    tx_id          xid8 NOT NULL DEFAULT pg_current_xact_id(),
    position       bigint GENERATED ALWAYS AS IDENTITY,
    type           text NOT NULL CHECK (type ~ '^[A-Za-z][A-Za-z0-9_]*$'),
    schema_version smallint NOT NULL DEFAULT 1,
    data           jsonb NOT NULL,
    meta           jsonb NOT NULL,
    data_digest    text NOT NULL,
    meta_digest    text NOT NULL,
    prev_hash      text NOT NULL,
    hash           text NOT NULL,
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tournament_id, seq)
);
CREATE INDEX tournament_events_global ON tournament_events (tx_id, position);
-- The sweep's safety net looks for tournaments that have not finished.
CREATE INDEX tournament_events_finished ON tournament_events (tournament_id) WHERE type = 'TournamentFinished';

CREATE TRIGGER tournament_events_no_update BEFORE UPDATE OR DELETE ON tournament_events
    FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER tournament_events_no_truncate BEFORE TRUNCATE ON tournament_events
    FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();

-- Which game a table of a round plays: how the worker finds a finished game's
-- tournament.  Written in the transaction that creates the game, and the
-- unique (tournament, round, table) makes a second creation of one table's
-- game (two workers advancing at once) fail instead of seating it twice.
CREATE TABLE tournament_games (
    game_id       uuid PRIMARY KEY REFERENCES games (game_id),
    tournament_id uuid NOT NULL REFERENCES tournaments (tournament_id),
    round         int NOT NULL CHECK (round >= 1),
    table_no      int NOT NULL CHECK (table_no >= 1),
    UNIQUE (tournament_id, round, table_no)
);
