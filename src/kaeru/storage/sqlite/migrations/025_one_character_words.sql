-- Text in the scripts written without spaces (Han, kana, Hangul, Thai, Lao, Myanmar, Khmer) is
-- indexed as its two-character pieces and each character alone from now on, so a one-character
-- word (`猫`) is found; text is composed (NFC) first, so decomposed kana and Hangul (macOS file
-- names, clipboards) is found by what was typed composed; `々` and the Hangul jamo join those
-- scripts (decision 85, as revised; `domain/text.py`). A vault holding such text has its
-- full-text index rebuilt once, when it is opened after this migration (`text_index_pending`,
-- the store's `reindex_text`); any other vault is left as it is.
INSERT OR IGNORE INTO meta (key, value)
SELECT 'text_index_pending', '1'
WHERE EXISTS (
    SELECT 1 FROM nodes
    WHERE retracted = 0
      -- Text that is all ASCII holds none of these characters: one byte a character is checked
      -- first, so the pattern runs only over the rest (decision 125).
      AND (length(CAST(name AS BLOB)) <> length(name) OR length(CAST(description AS BLOB)) <> length(description)
           OR length(CAST(body AS BLOB)) <> length(body) OR length(CAST(tags AS BLOB)) <> length(tags))
      AND (coalesce(name, '') || ' ' || coalesce(description, '') || ' ' || coalesce(body, '') || ' ' || tags)
          GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿々-〇〻㄰-㆏ꥠ-꥿ힰ-퟿぀-ヿㇰ-ㇿ㐀-䶿一-鿿가-힯豈-﫿ｦ-ﾟ𠀀-𱍏]*'
);
