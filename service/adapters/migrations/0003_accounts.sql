-- Accounts, the lobby and kept audits (docs/API.md "Accounts and keys", "Tables").
--
-- Rated or casual, and who sits where, are NOT stored here: they are written
-- into each game's GameCreated event ("rated", "accounts", "created_by",
-- "table", "joined"; service/domain/pipeline.py), so a replay, an audit and
-- `make rebuild` need nothing but the stream.  Games created before this
-- migration have no "rated" in their opening event, and so they are casual:
-- nothing is rewritten (events are append-only).  The leaderboards read
-- "rated" from the opening event, and their read model carries a format
-- version (projections/leaderboards.py FORMAT): the first worker after the
-- upgrade sees the old version and folds the leaderboards again from the
-- start, so the old games leave them by themselves (docs/LEADERBOARDS.md).

-- One row per account.  The key is 256 random bits shown once; only its
-- sha256 is kept.  A handle is unique ignoring case ("Ann" and "ann" are one).
CREATE TABLE accounts (
    account_id     uuid PRIMARY KEY,
    handle         text NOT NULL CHECK (handle ~ '^[A-Za-z0-9_-]{3,24}$'),
    handle_key     text GENERATED ALWAYS AS (lower(handle)) STORED UNIQUE,
    kind           text NOT NULL CHECK (kind IN ('player', 'organiser')),
    key_hash       bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    created_at     timestamptz NOT NULL DEFAULT now(),
    key_rotated_at timestamptz
);

-- Open tables of the lobby.  A table's row is locked (SELECT ... FOR UPDATE)
-- by every join and leave, so two players racing for the last seat are
-- serialised: one gets it, the other finds the table started.  The game is
-- created in the same transaction as the join that fills the table.
CREATE TABLE lobby_tables (
    table_id    uuid PRIMARY KEY,
    game        text NOT NULL,
    seats       int NOT NULL CHECK (seats BETWEEN 1 AND 8),
    options     jsonb NOT NULL,
    rated       boolean NOT NULL,
    clock       jsonb,
    status      text NOT NULL CHECK (status IN ('open', 'started', 'closed')),
    game_id     uuid REFERENCES games (game_id),
    created_by  text NOT NULL,
    creator_id  uuid NOT NULL REFERENCES accounts (account_id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    started_at  timestamptz,
    CHECK ((status = 'started') = (game_id IS NOT NULL))
);
-- The lobby lists tables by status, newest first.
CREATE INDEX lobby_tables_listed ON lobby_tables (status, created_at DESC, table_id DESC);
-- How many open tables an organiser has (a cap bounds them).
CREATE INDEX lobby_tables_creator ON lobby_tables (creator_id) WHERE status = 'open';

CREATE TABLE lobby_seats (
    table_id   uuid NOT NULL REFERENCES lobby_tables (table_id),
    account_id uuid NOT NULL REFERENCES accounts (account_id),
    handle     text NOT NULL,
    -- Join order: the seat draw starts from it (recorded as "joined").
    joined     bigint GENERATED ALWAYS AS IDENTITY,
    joined_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, account_id)
);
CREATE INDEX lobby_seats_account ON lobby_seats (account_id);

-- The audit of a finished game, computed once and kept: a finished stream
-- cannot change unless someone tampers with the store, which the operator
-- re-checks on demand (GET /v1/games/{id}/audit?recheck=true).
CREATE TABLE game_audits (
    game_id     uuid PRIMARY KEY REFERENCES games (game_id),
    version     int NOT NULL,
    report      jsonb NOT NULL,
    computed_at timestamptz NOT NULL DEFAULT now()
);
