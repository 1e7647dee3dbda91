"""Whether a recall query asks about open work ("what is left to do", "what is overdue", "next
steps", "where did we leave off") or about decisions ("what did we decide?", "which decisions were
made?"), so that its plan adds the open tasks, open claims and held slots (decision 293), or the
decisions (decision 319).

Such a question is worded with words no memory holds ("left", "next", "leave off", "decide"): a
decision note says what was decided, not that it is one (its kind is a tag, kept out of the word
index, decision 34). So the lexical channel finds nothing, and an agent that asked it without
`task_intent` got no answer at all, said to be complete. Only phrases are read, never a lone common
word: "next" or "do" alone is in every other question ("what did she do next summer"). English and
the six other languages `recall` stems, matched in lower case without accents
(`languages.without_accents`); and, without word boundaries, Japanese, Chinese and Korean."""

from __future__ import annotations

import re

from kaeru.domain.languages import without_accents

_PHRASES = (
    # English
    r"(?:left|still|remain(?:s|ing)?|needs?) to (?:be )?(?:do|done|finish(?:ed)?|fix(?:ed)?|build|built|ship(?:ped)?)",
    r"to-?dos?|to do list",
    r"next steps?|what(?:'s| is| are)? next|(?:should|shall|can|to) (?:i |we )?(?:do|work on|tackle|pick up) next",
    r"(?:should|shall|can|do) (?:i|we) work on(?: now| today| first)?",
    r"(?:open|pending|remaining|unfinished|outstanding|in-progress|in progress) (?:tasks?|work|items?|issues?|claims?|questions?)",
    r"(?:what|which) (?:(?:tasks?|items?|issues?|claims?|questions?|things?|work) )?(?:is|are) (?:still )?"
    r"(?:open|pending|outstanding|unfinished|overdue)|still open|overdue|past due",
    r"where (?:was i|were we|did (?:i|we) (?:leave|stop)|(?:i|we) left off)|(?:leave|left) off",
    r"what (?:was|were) (?:i|we) (?:doing|working on)",
    # German
    r"noch (?:zu tun|offen)|offene (?:aufgaben|punkte|fragen)|nachste schritte|steht noch an|uberfallig",
    r"wo (?:war|waren) (?:ich|wir) stehen ?geblieben",
    # French
    r"reste a faire|reste-t-il|qu'est-ce qui reste|(?:taches?|travaux) (?:en cours|restante?s?|a faire)",
    r"prochaines? etapes?|encore (?:ouverte?s?|en cours)|en retard",
    # Spanish
    r"(?:queda|falta) por hacer|tareas pendientes|proximos pasos|(?:sigue|siguen|todavia|aun) (?:abiert|pendient)[oae]s?",
    # Italian
    r"resta da fare|(?:attivita|compiti) (?:in sospeso|da fare)|prossimi passi|ancora (?:aperte?|apert[io])|in ritardo",
    # Portuguese
    r"falta fazer|tarefas pendentes|proximos passos|ainda (?:abert|pendent)[oae]s?|atrasad[oa]s?",
    # Dutch
    r"nog te doen|openstaande (?:taken|punten|vragen)|volgende stappen|nog open|achterstallig",
)
#: Scripts without spaces: no word boundaries to ask for (folded as the query is: a voiced kana
#: loses its mark, `ど` is read `と`).
_UNSPACED = (
    r"残り|未完了|未着手|やること|やる事|次に(?:何|なに)|期限切れ|待办|未完成|剩下|还有什么|남은 (?:작업|일)|할 일"
)
_OPEN_WORK = re.compile(r"(?<!\w)(?:" + "|".join(_PHRASES) + r")(?!\w)|" + without_accents(_UNSPACED))

_DECISIONS = (
    # English
    r"what (?:did|have|has|had|do) (?:\w+ ){1,3}?(?:decide|decided|agree|agreed|settle|settled|choose|chose|chosen|pick|picked)",
    r"what (?:was|were|has been|have been|got) (?:\w+ )?(?:decided|agreed|settled|chosen)",
    r"why did (?:\w+ ){1,3}?(?:decide|choose|chose|pick|go with|switch|move)",
    r"(?:which|what|any|our|latest|recent|last|past|previous|key|main|important|all) decisions?",
    r"decisions? (?:were |was |have been |has been |we )?(?:made|taken|reached|make|took)|^decisions?\W*$",
    # German
    r"was (?:haben|hat) (?:\w+ ){1,2}?(?:entschieden|beschlossen|vereinbart)|was wurde (?:entschieden|beschlossen)",
    r"welche (?:entscheidungen|beschlusse)|entscheidungen (?:getroffen|gefallen)",
    # French
    r"qu'?(?:est-ce qu'|est-ce que )?(?:avons-nous|avez-vous|ont-ils|ont-elles|on a|a-t-on|nous avons|il a|elle a|\w+ a) (?:\w+ )?decide",
    r"qu'est-ce qui a ete decide|quelles? (?:\w+ )?decisions?|decisions? prises?",
    # Spanish
    r"que (?:decidimos|decidio|decidieron|hemos decidido|han decidido|se decidio)|(?:que|cuales) decisiones|decisiones tomadas",
    # Italian
    r"cosa (?:abbiamo|hanno|ha) deciso|cosa e stato deciso|quali decisioni|decisioni prese",
    # Portuguese
    r"o que (?:decidimos|decidiu|decidiram|foi decidido)|quais (?:as )?decisoes|decisoes tomadas",
    # Dutch
    r"wat (?:hebben|heeft) (?:\w+ ){1,2}?(?:besloten|beslist)|wat is (?:er )?besloten|welke (?:beslissingen|besluiten)",
)
_UNSPACED_DECISIONS = r"決定|決めた|決めました|決まった|決断|决定|决策|결정"
_DECISION = re.compile(r"(?<!\w)(?:" + "|".join(_DECISIONS) + r")(?!\w)|" + without_accents(_UNSPACED_DECISIONS))


def _folded(query: str) -> str:
    return without_accents(query).replace("\u2019", "'")


def open_work_phrase(query: str) -> str:
    """The phrase of `query` that asks about open work, as written in it folded; "" when none."""
    found = _OPEN_WORK.search(_folded(query))
    return found[0] if found else ""


def decisions_phrase(query: str) -> str:
    """The phrase of `query` that asks what was decided, as written in it folded; "" when none."""
    found = _DECISION.search(_folded(query))
    return found[0] if found else ""
