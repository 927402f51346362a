-- 018 (PostgreSQL only): the console's subscriber search reads a range of an index, as SQLite's does, not
-- every address after the cursor. starts_with() turns into an index range only on a "C"-collated key
-- (PostgreSQL 15), whatever the database's collation: so the prefix, the keyset and the order use
-- lower(...) COLLATE "C" (operator/postgres/reads.ts), over these two indexes. The unique
-- subscribers_email index stays: it is what keeps one row per address.
CREATE INDEX subscribers_email_prefix ON subscribers ((lower(email) COLLATE "C"));
CREATE INDEX topics_text_prefix ON topics ((lower(text) COLLATE "C"), subscriber_id);
