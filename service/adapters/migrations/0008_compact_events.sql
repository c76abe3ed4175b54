-- Compact event rows (issue #20, "storage that a million games can afford";
-- docs/SCALING.md, "Storage per event").  Same events, same hash chain, fewer bytes:
--
-- * digests and hashes as 32 raw bytes (bytea), not 64 hex characters: the
--   store still answers hex (EventStore selects encode(..., 'hex'));
-- * data and meta as json, not jsonb: the text as written is smaller than
--   jsonb's binary form for these small objects, and the fold row of a
--   rebuild is then plain concatenation of stored text (json::text costs
--   nothing), which is what the stored fold_row column of 0002 was for: it
--   goes, and with it the second copy of every event's data;
-- * a decision's meta once: the events of one decision share their meta
--   (intent, seat, arrival time and clock, ~400 bytes with a clock), so only
--   the first event of each appended batch stores it and the others store
--   NULL, meaning "the meta of the event before" (the store fills it in on
--   read; meta_digest and the chain are computed over the full meta, as before).
--
-- Applying it rewrites both event tables under an exclusive lock, once: 4.1 s
-- for 202,508 events (171 MB -> 87 MB) on our 2-core machine, so about 20 s per
-- million events (docs/SCALING.md, "Storage per event"): on a large store, plan the moment.

-- Existing rows first: drop the meta that repeats the row before's.  The
-- append-only triggers are lifted for this one statement, in this migration's
-- own transaction; the rewrite below leaves no dead rows behind.
ALTER TABLE events DROP COLUMN fold_row;
ALTER TABLE events ALTER COLUMN meta DROP NOT NULL;
ALTER TABLE events DISABLE TRIGGER events_no_update;
UPDATE events e SET meta = NULL
  FROM (SELECT game_id, seq, meta = lag(meta) OVER (PARTITION BY game_id ORDER BY seq) AS same FROM events) p
 WHERE p.same AND e.game_id = p.game_id AND e.seq = p.seq;
ALTER TABLE events ENABLE TRIGGER events_no_update;

ALTER TABLE events
    ALTER COLUMN data TYPE json USING data::text::json,
    ALTER COLUMN meta TYPE json USING meta::text::json,
    ALTER COLUMN data_digest TYPE bytea USING decode(data_digest, 'hex'),
    ALTER COLUMN meta_digest TYPE bytea USING decode(meta_digest, 'hex'),
    ALTER COLUMN prev_hash TYPE bytea USING decode(prev_hash, 'hex'),
    ALTER COLUMN hash TYPE bytea USING decode(hash, 'hex'),
    ADD CONSTRAINT events_digests_are_sha256 CHECK (
        octet_length(data_digest) = 32 AND octet_length(meta_digest) = 32
        AND octet_length(prev_hash) = 32 AND octet_length(hash) = 32),
    -- The first event of a stream opens it: its meta is never "the one before".
    ADD CONSTRAINT events_first_has_meta CHECK (seq > 1 OR meta IS NOT NULL);

-- Tournament streams: the same format, so one reader and one writer serve both.
ALTER TABLE tournament_events ALTER COLUMN meta DROP NOT NULL;
ALTER TABLE tournament_events DISABLE TRIGGER tournament_events_no_update;
UPDATE tournament_events e SET meta = NULL
  FROM (SELECT tournament_id, seq, meta = lag(meta) OVER (PARTITION BY tournament_id ORDER BY seq) AS same
          FROM tournament_events) p
 WHERE p.same AND e.tournament_id = p.tournament_id AND e.seq = p.seq;
ALTER TABLE tournament_events ENABLE TRIGGER tournament_events_no_update;

ALTER TABLE tournament_events
    ALTER COLUMN data TYPE json USING data::text::json,
    ALTER COLUMN meta TYPE json USING meta::text::json,
    ALTER COLUMN data_digest TYPE bytea USING decode(data_digest, 'hex'),
    ALTER COLUMN meta_digest TYPE bytea USING decode(meta_digest, 'hex'),
    ALTER COLUMN prev_hash TYPE bytea USING decode(prev_hash, 'hex'),
    ALTER COLUMN hash TYPE bytea USING decode(hash, 'hex'),
    ADD CONSTRAINT tournament_events_digests_are_sha256 CHECK (
        octet_length(data_digest) = 32 AND octet_length(meta_digest) = 32
        AND octet_length(prev_hash) = 32 AND octet_length(hash) = 32),
    ADD CONSTRAINT tournament_events_first_has_meta CHECK (seq > 1 OR meta IS NOT NULL);
