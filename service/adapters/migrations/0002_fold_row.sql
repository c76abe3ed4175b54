-- Each event as projections read it: the JSON text [seq,"Type",data].
--
-- A rebuild folds every event of every game; with the row's text computed on
-- read, PostgreSQL spent ~2 µs an event building it (jsonb to text, quoting,
-- concatenation), as much as the fold itself (`make bench`: rebuild_rate,
-- docs/PERFORMANCE.md).  Stored once at append, a stream's rows are only
-- joined on read (EventStore.read_for_fold).  Derived from the row itself, so
-- it can never disagree with `data`, and it is not part of the hash chain.
--
-- Applying it rewrites the events table under an exclusive lock (~3.5 s for
-- 400k events on our 2-core machine): on a large store, plan the moment.

-- An event type is a name: it goes into the JSON text unescaped.
ALTER TABLE events ADD CONSTRAINT events_type_is_a_name CHECK (type ~ '^[A-Za-z][A-Za-z0-9_]*$');

ALTER TABLE events ADD COLUMN fold_row text
    GENERATED ALWAYS AS ('[' || seq::text || ',"' || type || '",' || data::text || ']') STORED;
