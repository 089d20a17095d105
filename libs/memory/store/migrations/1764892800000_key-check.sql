-- Up Migration

-- How the replicas of this store keep event bodies, recorded by the first replica to start: a fixed
-- event as its codec stores it (in the clear, or sealed with its key). A replica whose codec cannot
-- read it back (no key, another key, or a key where the store is clear) refuses to start, so the
-- table never holds rows in two encodings.
ALTER TABLE event_position ADD COLUMN key_check text;

-- Down Migration

ALTER TABLE event_position DROP COLUMN key_check;
