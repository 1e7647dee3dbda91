-- Text in the scripts written without spaces (Han, kana, Hangul, Thai, Lao, Myanmar, Khmer) is
-- indexed as its two-character pieces and each character alone from now on, so a one-character
-- word (`猫`) is found; text is composed (NFC) first, so decomposed kana and Hangul (macOS file
-- names, clipboards) is found by what was typed composed; `々` and the Hangul jamo join those
-- scripts (decision 85, as revised; `domain/text.py`). A database holding such text has its index
-- columns and BM25 statistics recomputed once, when it is opened after this migration
-- (`text_index_pending`: `rebuild_text_index`, literal tokens included); any other database is
-- left as it is.
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
      AND concat_ws(' ', name, description, body, array_to_string(tags, ' '))
          ~ '[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3005-\u3007\u303b\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]'
)
ON CONFLICT (key) DO NOTHING;
