-- Term statistics of both full-text indexes, so a query can tell rare words from common ones
-- before choosing its plan (see SqliteSession.search).
CREATE VIRTUAL TABLE nodes_fts_vocab USING fts5vocab (nodes_fts, 'row');
CREATE VIRTUAL TABLE nodes_stem_fts_vocab USING fts5vocab (nodes_stem_fts, 'row');
