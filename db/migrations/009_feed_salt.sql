-- The personal Atom feed's own salt (src/feed/feed-link.ts): NULL until the reader asks for a new feed
-- address on their preferences page; then the feed token is signed with it as well as the subscriber's
-- token salt, so the old feed URL stops working and no other link of theirs changes.
ALTER TABLE subscribers ADD COLUMN feed_salt TEXT;
