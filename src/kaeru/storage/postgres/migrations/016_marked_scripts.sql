-- Words whose vowels, tones or points are combining marks — Devanagari and the other Indic
-- scripts, Thai, Lao, Tibetan, Myanmar, Khmer, pointed Hebrew, vocalised Arabic, decomposed Latin —
-- are now tokenised whole (a mark no longer splits the word), Thai, Lao, Myanmar and Khmer as
-- overlapping two-character pieces, and Indic and Southeast Asian marks are kept by folding
-- (decision 86; `domain/text.py`). A database holding text of these blocks has its index columns
-- and BM25 statistics recomputed once, when it is opened after this migration
-- (`text_index_pending`); any other database is left as it is.
INSERT INTO meta (key, value)
SELECT 'text_index_pending', '1'
WHERE EXISTS (
    SELECT 1 FROM nodes
    WHERE NOT retracted
      -- Text that is all ASCII holds none of these characters: one byte a character is checked
      -- first, so the pattern runs only over the rest (decision 125).
      AND (octet_length(name) <> char_length(name) OR octet_length(description) <> char_length(description)
           OR octet_length(body) <> char_length(body)
           OR octet_length(array_to_string(tags, ' ')) <> char_length(array_to_string(tags, ' ')))
      AND concat_ws(' ', name, description, body, array_to_string(tags, ' ')) ~ '[\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0900-\u0dff\u0e00-\u0fff\u1000-\u109f\u1780-\u17ff\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]'
)
ON CONFLICT (key) DO NOTHING;
