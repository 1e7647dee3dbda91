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
      AND (coalesce(name, '') || ' ' || coalesce(description, '') || ' ' || coalesce(body, '') || ' ' || tags)
          GLOB '*[぀-ヿㇰ-ㇿ㐀-䶿一-鿿가-힯豈-﫿ｦ-ﾟ𠀀-𱍏]*'
);
