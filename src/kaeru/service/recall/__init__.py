"""`recall`: task-aware retrieval. Compile a plan, run its channels, fuse them (weighted reciprocal
rank fusion), apply priors and currentness, cut to the token budget.

- `use_case`: the entry point — arguments, plan, paging, views, explain, the next step;
- `channels`: each channel's candidates, added to the fusion;
- `bm25`: BM25F of the candidates with the searched scope's word statistics;
- `fusion`: the fused score and the final order (priors, nudges, currentness);
- `history`: explore_history's revision listing and its views;
- `indexing`: embedding nodes for the semantic channel.
"""

from kaeru.domain.plans import Intent
from kaeru.service.recall.indexing import embed_nodes, reindex
from kaeru.service.recall.use_case import RecallOutcome, channel_names, recall

__all__ = ["Intent", "RecallOutcome", "channel_names", "embed_nodes", "recall", "reindex"]
