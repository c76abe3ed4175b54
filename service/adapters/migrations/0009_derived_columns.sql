-- Store what cannot be derived, derive the rest on read (issue #20, "storage that a
-- million games can afford"; docs/SCALING.md, "Storage per event").  Same events, same
-- hash chain, same answers: 107 bytes less per event row.
--
-- * prev_hash is the hash of the event before it in the same stream (GENESIS for
--   seq 1): the readers select it with one primary-key probe;
-- * data_digest and meta_digest are sha256(salt || canonical(value)) with the salt
--   drawn from the stream's seed and the seq (service/domain/canonical.py): the
--   store computes them from the stored data and meta and the seed it keeps,
--   where it reads them (EventStore.read, iter_stream, read_all; the tournament
--   store alike).  The stored hash still covers them: an event whose data or
--   meta was edited in place no longer matches its hash, and the audit says so
--   at that seq (service/audit/checks.py);
-- * recorded_at was read by nothing;
-- * new rows store a decision's meta without what its clock repeats (the
--   clock's time, the deadlines that are that time plus the seat's remaining
--   time, an empty timed_out): records.compact_meta / full_meta, exact.
--
-- Not a rolling upgrade: processes of the tree before read the dropped columns,
-- so they stop before this runs (make run and compose migrate before starting
-- the API and the worker).
--
-- PostgreSQL drops a column without rewriting the table: the CLUSTER at the end
-- gives the bytes back.
ALTER TABLE events
    DROP CONSTRAINT events_digests_are_sha256,
    DROP COLUMN data_digest,
    DROP COLUMN meta_digest,
    DROP COLUMN prev_hash,
    DROP COLUMN recorded_at,
    ADD CONSTRAINT events_hash_is_sha256 CHECK (octet_length(hash) = 32);

ALTER TABLE tournament_events
    DROP CONSTRAINT tournament_events_digests_are_sha256,
    DROP COLUMN data_digest,
    DROP COLUMN meta_digest,
    DROP COLUMN prev_hash,
    DROP COLUMN recorded_at,
    ADD CONSTRAINT tournament_events_hash_is_sha256 CHECK (octet_length(hash) = 32);

-- The global feed's index only ever grows at its right edge (tx_id, position
-- ascend): its pages can be packed full (the default leaves 10 % free for
-- inserts in the middle that never come).  Applies to pages written from now on.
ALTER INDEX events_global SET (fillfactor = 100);
ALTER INDEX tournament_events_global SET (fillfactor = 100);

-- Give the dropped columns' bytes back now: CLUSTER rewrites each table (in its
-- primary key's order, so a game's events lie together) and rebuilds its indexes
-- packed, under an exclusive lock, once; an empty table costs nothing
-- (docs/SCALING.md, "Storage per event", has the time per million events).
CLUSTER events USING events_pkey;
CLUSTER tournament_events USING tournament_events_pkey;
