-- The live verdict edges (`falsifies`, `supersedes`) by target. Every hit a search ranks asks
-- whether a node in scope supersedes it, and every page shown asks for its nodes' verdicts; probing
-- the general (dst, edge_type) index cost ~2 µs a hit even when, as usual, no such edge exists.
-- This index holds only the live verdicts, so the probe is a fraction of that and a selective
-- search's ranking ~20 µs cheaper. Queries repeat the condition literally, in this order
-- (`_LIVE_VERDICT` in store.py): that is how SQLite knows it may use a partial index.
CREATE INDEX edges_verdicts ON edges (dst, edge_type)
    WHERE edge_type IN ('falsifies', 'supersedes') AND retracted = 0;
