-- Replay rows keep their argument digest (SHA-256) as its 32 bytes instead of 64 hex characters
-- (decision 16.D2): 32 bytes less in every row of `requests`, which every note with a request id
-- writes (~200 bytes a row before). The session writes bytes from now on and reads either form;
-- this turns the rows already there into bytes, so one vault holds one form. The schema level this
-- migration raises (`PRAGMA user_version`) stops a server of an older kaeru, which would compare
-- bytes with its hex digest and refuse a genuine retry as a reused request id.
UPDATE requests SET args_hash = unhex(args_hash)
    WHERE typeof(args_hash) = 'text' AND length(args_hash) = 64 AND unhex(args_hash) IS NOT NULL;
