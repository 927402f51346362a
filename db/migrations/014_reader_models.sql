-- 014: a model per reader (src/feedback/): logistic regression over tf-idf words and bigrams, trained in
-- the service on the reader's own votes, calibrated so one probability threshold means the same for all.
-- Only additions: older code reading this file still works (it keeps ignoring these columns).

-- One row per reader with a model. weights: JSON {"t": [term…], "w": [weight…], "a": [anchor paper id or
-- null…]}, the strongest MODEL_TERMS weights; a term's anchor is the liked paper it weighs most in (the
-- "because you liked …" of a suggestion). Calibrated probability = 1 / (1 + exp(-(cal_a * (bias + w·x) + cal_b))).
CREATE TABLE reader_models (
  subscriber_id INTEGER PRIMARY KEY REFERENCES subscribers (id) ON DELETE CASCADE,
  bias       REAL NOT NULL,
  cal_a      REAL NOT NULL,
  cal_b      REAL NOT NULL,
  weights    TEXT NOT NULL,
  positives  INTEGER NOT NULL,   -- examples it was trained on, by kind (what `digest subscribers` can show)
  negatives  INTEGER NOT NULL,
  context    INTEGER NOT NULL,   -- papers shown and not voted on (weak negatives)
  trained_at TEXT NOT NULL
) STRICT;

-- Why a paper was suggested: the liked paper that weighs most in its score ("because you liked …").
ALTER TABLE digest_suggestions ADD COLUMN reason_paper INTEGER;

-- "Only the papers my model rates well": 1 = the digest keeps the papers whose calibrated probability
-- reaches MODEL_KEEP (and at least its MODEL_KEEP_MIN best), the others are left out of it. 0 = all.
ALTER TABLE subscribers ADD COLUMN model_only INTEGER NOT NULL DEFAULT 0 CHECK (model_only IN (0, 1));

-- like: topics: how many papers the index held when the examples' terms were last chosen. Matching
-- chooses them again once the index has grown by LIKE_REFRESH_GROWTH (src/like/like.ts), so a like:
-- topic saved on a young database does not keep the generic words that looked rare then.
ALTER TABLE queries ADD COLUMN like_corpus INTEGER;
