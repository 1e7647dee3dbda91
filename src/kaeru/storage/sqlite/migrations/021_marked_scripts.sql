-- Words whose vowels, tones or points are combining marks — Devanagari and the other Indic
-- scripts, Thai, Lao, Tibetan, Myanmar, Khmer, pointed Hebrew, vocalised Arabic, decomposed Latin —
-- are now tokenised whole (a mark no longer splits the word), Thai, Lao, Myanmar and Khmer as
-- overlapping two-character pieces, and Indic and Southeast Asian marks are kept by folding
-- (decision 86; `domain/text.py`). A vault holding text of these blocks has its full-text index
-- rebuilt once, when it is opened after this migration (`text_index_pending`); any other vault is
-- left as it is.
INSERT OR IGNORE INTO meta (key, value)
SELECT 'text_index_pending', '1'
WHERE EXISTS (
    SELECT 1 FROM nodes
    WHERE retracted = 0
      -- Text that is all ASCII holds none of these characters: one byte a character is checked
      -- first, so the pattern runs only over the rest (a 1M-node vault: 130-190 s -> 7 s; decision 125).
      AND (length(CAST(name AS BLOB)) <> length(name) OR length(CAST(description AS BLOB)) <> length(description)
           OR length(CAST(body AS BLOB)) <> length(body) OR length(CAST(tags AS BLOB)) <> length(tags))
      AND (coalesce(name, '') || ' ' || coalesce(description, '') || ' ' || coalesce(body, '') || ' ' || tags)
          GLOB '*[̀-ͯ҃-҉֑-ׇؐ-ًؚ-ٰٟۖ-ۭऀ-෿฀-࿿က-႟ក-៿᪰-᫿᷀-᷿⃐-⃿︠-︯]*'
);
