-- Text in scripts written without spaces between words (Han, kana, Hangul) is indexed as
-- overlapping two-character pieces from now on (decision 85; `domain/text.py` `UNSPACED`); before,
-- a whole run was one token, so no word inside a Japanese or Chinese sentence could be found. A
-- vault holding such text has its full-text index rebuilt once, when it is opened after this
-- migration (`text_index_pending`, the store's `reindex_text`); any other vault is left as it is.
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
          GLOB '*[぀-ヿㇰ-ㇿ㐀-䶿一-鿿가-힯豈-﫿ｦ-ﾟ𠀀-𱍏]*'
);
