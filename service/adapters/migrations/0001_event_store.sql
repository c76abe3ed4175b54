-- Quarterdeck event store.  Append-only streams, one per game.

CREATE TABLE games (
    game_id         uuid PRIMARY KEY,
    game            text NOT NULL,
    rules_version   text NOT NULL,
    players         jsonb NOT NULL,
    options         jsonb NOT NULL,
    seed_commitment text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX games_created ON games (created_at DESC);

-- The secret seed lives apart from the stream; only its sha256 commitment is
-- in the opening event.  It is revealed by the closing event.
CREATE TABLE game_seeds (
    game_id uuid PRIMARY KEY REFERENCES games (game_id),
    seed    bytea NOT NULL CHECK (length(seed) = 32)
);

-- Per-seat bearer tokens, stored as sha256 only.
CREATE TABLE seat_tokens (
    game_id    uuid NOT NULL REFERENCES games (game_id),
    seat       int NOT NULL,
    player     text NOT NULL,
    token_hash bytea NOT NULL,
    PRIMARY KEY (game_id, seat)
);

CREATE TABLE events (
    game_id        uuid NOT NULL REFERENCES games (game_id),
    seq            int NOT NULL CHECK (seq >= 1),
    -- Global order for consumers reading across games: (tx_id, position).
    -- A reader only takes rows whose transaction is older than the oldest
    -- transaction still running (pg_snapshot_xmin), so a row that commits
    -- late can never fall behind a checkpoint (README: "The late-commit gap").
    tx_id          xid8 NOT NULL DEFAULT pg_current_xact_id(),
    position       bigint GENERATED ALWAYS AS IDENTITY,
    type           text NOT NULL,
    schema_version smallint NOT NULL DEFAULT 1,
    data           jsonb NOT NULL,
    meta           jsonb NOT NULL,
    data_digest    text NOT NULL,
    meta_digest    text NOT NULL,
    prev_hash      text NOT NULL,
    hash           text NOT NULL,
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    -- Optimistic concurrency: two writers of the same seq collide here.
    PRIMARY KEY (game_id, seq)
);
CREATE INDEX events_global ON events (tx_id, position);
CREATE INDEX events_finished ON events (tx_id, position) WHERE type = 'GameFinished';

-- Nothing updates or deletes an event.
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only (% refused)', TG_OP USING ERRCODE = 'QD001';
END $$;
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();

-- Idempotency-Key: the first successful answer, keyed per game.
CREATE TABLE intent_keys (
    game_id      uuid NOT NULL REFERENCES games (game_id),
    key          text NOT NULL,
    seat         int NOT NULL,
    request_hash text NOT NULL,
    response     jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (game_id, key)
);

-- State snapshots for the cold command path (derived data, safe to drop).
-- json, not jsonb: json keeps the text as written, so a state read back has
-- the same key order as one folded from scratch, and an engine that iterates
-- a dict decides the same either way.
CREATE TABLE snapshots (
    game_id  uuid NOT NULL REFERENCES games (game_id),
    version  int NOT NULL,
    state    json NOT NULL,
    PRIMARY KEY (game_id, version)
);
