"""Whether a recall query asks about open work ("what is left to do", "what is overdue", "next
steps", "where did we leave off"), about decisions ("what did we decide?", "which decisions were
made?") or about the rules in force ("what rules apply?", "rules"), so that its plan adds the open
tasks, open claims and held slots (decision 293), the decisions (decision 319), or the rules.

Such a question is worded with words no memory holds ("left", "next", "leave off", "decide"): a
decision note says what was decided, not that it is one (its kind is a tag, kept out of the word
index, decision 34). So the lexical channel finds nothing, and an agent that asked it without
`task_intent` got no answer at all, said to be complete. Only phrases are read, never a lone common
word: "next" or "do" alone is in every other question ("what did she do next summer"). English and
the six other languages `recall` stems, matched in lower case without accents
(`languages.without_accents`); and, without word boundaries, Japanese, Chinese and Korean."""

from __future__ import annotations

import re

from kaeru.domain.languages import STEMMERS, not_topics, without_accents
from kaeru.domain.stopwords import NOT_TOPICS
from kaeru.domain.text import query_tokens, tokens

_PHRASES = (
    # English
    r"(?:left|still|remain(?:s|ing)?|needs?) to (?:be )?(?:do|done|finish(?:ed)?|fix(?:ed)?|build|built|ship(?:ped)?)",
    r"to-?dos?|to do list",
    r"next steps?|what(?:'s| is| are)? next|(?:should|shall|can|to) (?:i |we )?(?:do|work on|tackle|pick up) next",
    r"(?:should|shall|can|do) (?:i|we) work on(?: now| today| first)?",
    r"(?:open|pending|remaining|unfinished|outstanding|in-progress|in progress) (?:tasks?|work|items?|issues?|claims?|questions?)",
    r"(?:what|which) (?:(?:tasks?|items?|issues?|claims?|questions?|things?|work) )?(?:is|are) (?:still )?"
    r"(?:open|pending|outstanding|unfinished|overdue)|still open|overdue|past due",
    # Late work: "late" alone is in every other question ("a late dinner", "late fees"), so only
    # with the work it qualifies.
    r"(?:what|which) (?:tasks?|items?|issues?|things?|work) (?:is|are) (?:still |running )?(?:late|behind)",
    r"(?:late|delayed) (?:tasks?|items?|work)|(?:tasks?|items?|work) (?:(?:that (?:is|are) |running )(?:late|behind)|behind schedule)",
    r"where (?:was i|were we|did (?:i|we) (?:leave|stop)|(?:i|we) left off)|(?:leave|left) off",
    r"what (?:was|were) (?:i|we) (?:doing|working on)",
    # German
    r"noch (?:zu tun|offen)|offene (?:aufgaben|punkte|fragen)|nachste schritte|steht noch an|uberfallig(?:e[nrs]?)?(?: (?:aufgaben|punkte|arbeiten))?",
    r"wo (?:war|waren) (?:ich|wir) stehen ?geblieben|(?:welche|was fur) (?:aufgaben|punkte) sind (?:noch )?(?:offen|uberfallig)",
    # French
    r"reste-t-il(?: a faire)?|qu'est-ce qui reste(?: a faire)?|reste a faire|(?:taches?|travaux) (?:en cours|restante?s?|a faire)",
    r"prochaines? etapes?|encore (?:ouverte?s?|en cours)|en retard",
    # Spanish
    r"(?:queda|falta) por hacer|tareas pendientes|proximos pasos|(?:sigue|siguen|todavia|aun) (?:abiert|pendient)[oae]s?",
    r"tareas (?:vencidas|atrasadas|retrasadas)",
    # Italian
    r"resta da fare|(?:attivita|compiti) (?:in sospeso|da fare|scadut[ei])|prossimi passi|ancora (?:aperte?|apert[io])|in ritardo",
    # Portuguese
    r"falta fazer|tarefas (?:pendentes|vencidas)|proximos passos|ainda (?:abert|pendent)[oae]s?|atrasad[oa]s?",
    # Dutch
    r"nog te doen|openstaande (?:taken|punten|vragen)|volgende stappen|nog open|achterstallige?",
)
#: Scripts without spaces: no word boundaries to ask for (folded as the query is: a voiced kana
#: loses its mark, `ど` is read `と`).
_UNSPACED = (
    r"残りの(?:タスク|作業|仕事)|未完了の?(?:タスク|作業)?|未着手|やること|やる事|次に(?:何|なに)を(?:する|やる)|"
    r"期限切れの(?:タスク|作業)|遅れている(?:タスク|作業)|待办|(?:逾期|过期)的?(?:任务|工作)|未完成的?(?:任务|工作)|剩下的(?:任务|工作)|남은 (?:작업|일)|할 일|(?:기한|마감)이 지난 (?:작업|일)"
)
_OPEN_WORK = re.compile(r"(?<!\w)(?:" + "|".join(_PHRASES) + r")(?!\w)|" + without_accents(_UNSPACED))

_DECISIONS = (
    # English
    r"what (?:did|have|has|had|do) (?:\w+ ){1,3}?(?:decide|decided|agree|agreed|settle on|settled on|choose|chose|chosen)",
    r"what (?:was|were|has been|have been|got) (?:\w+ )?(?:decided|agreed|settled|chosen)",
    r"why did (?:\w+ ){1,3}?(?:decide|choose)",
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
_UNSPACED_DECISIONS = r"何を決め|決定事項|決めたこと|決まったこと|决定了什么|做了什么决定|무엇을 결정|결정 사항"
_DECISION = re.compile(r"(?<!\w)(?:" + "|".join(_DECISIONS) + r")(?!\w)|" + without_accents(_UNSPACED_DECISIONS))

#: The ways to ask which rules are in force. "Rules" must be asked about as rules (which, what,
#: any, our…; what are, list, show me; in force, apply; or the word alone): "the rules of chess" is
#: about chess. And they must be rules as such, not a kind of them nor a thing they name: the word
#: after must be none (`_ENDS`) — "what rules engine", "the current rule of thumb", "active
#: constraint violations" ask about an engine, a habit, failures —, and a statement of rules in
#: force must open the query or follow a word of no subject (`_BEFORE`): "which firewall rules are
#: active", "is the unique constraint active" ask about a firewall and a database.
_NOUN = r"(?:rules?|constraints?|guidelines?)"
_IN_FORCE = r"(?:(?: that)? (?:apply|applies|hold)| (?:are |is )?(?:in force|in effect|active|current)| to follow| (?:do|does|should|must|shall) (?:i|we|you) follow)"
#: What may follow the rules asked about: the end, a mark, or a word that names no other thing.
_ENDS = (
    r"(?=\W*$|[^\w\s]|\s+(?:for|about|on|regarding|around|in|at|here|there|we|i|you|they|do|does|did|should|must"
    r"|shall|will|would|can|could|are|is|were|was|have|has|apply|applies|hold|holds|that|which|to|govern|governs"
    r"|exist|currently|now|still|today|active|current|of(?! thumb)|and|or|so|right|please|again|already)(?!\w))"
)
#: The words a statement of rules in force ("the rules that apply", "rules in force") may follow.
_BEFORE = r"(?:^|(?:the|our|any|all|which|what|these|those|some|no|there|are|project|team|house) )"
_DETERMINER = r"(?:the |our |your |all the |all |any |all of the )?(?:current |active )?"
_RULES = (
    # English
    r"(?:which|what|any|our|active|current|all)(?: the)? " + _NOUN + _ENDS + _IN_FORCE + "?",
    r"(?:what|which) (?:are|is|were) " + _DETERMINER + _NOUN + _ENDS + _IN_FORCE + "?",
    r"(?:list|show|give|tell|remind)(?: me| us)? " + _DETERMINER + _NOUN + _ENDS + _IN_FORCE + "?",
    _BEFORE + _NOUN + _IN_FORCE,
    r"^(?:the )?rules?\W*$",
    # German
    r"welche (?:regeln|vorgaben|richtlinien)(?: gelten)?|(?:regeln|vorgaben) (?:gelten|in kraft)|geltende regeln",
    # French
    r"quelles? (?:sont les )?(?:regles?|consignes?|contraintes?)(?: (?:s'appliquent|en vigueur|a suivre))?|regles? (?:en vigueur|a suivre)",
    # Spanish
    r"(?:que|cuales) (?:son las )?(?:reglas|normas)(?: (?:aplican|se aplican|vigentes|hay que seguir))?|reglas vigentes",
    # Italian
    r"(?:quali|che) (?:sono le )?regole(?: (?:valgono|si applicano|in vigore))?|regole in vigore",
    # Portuguese
    r"(?:quais|que) (?:sao )?(?:as )?regras(?: (?:se aplicam|valem|em vigor))?|regras em vigor",
    # Dutch ("afspraken" are appointments as often as agreements: "welke afspraken heb ik morgen")
    r"welke regels(?: gelden)?|regels (?:gelden|van kracht)",
)
_UNSPACED_RULES = (
    r"どのルール|ルールは何|守るべきルール|有効なルール|規則は何|哪些规则|什么规则|有效的规则|어떤 규칙|규칙은 무엇"
)
_RULE = re.compile(r"(?<!\w)(?:" + "|".join(_RULES) + r")(?!\w)|" + without_accents(_UNSPACED_RULES))


#: Words that ask, not say what about: a question made of its phrase and these asks for the whole
#: list (open work, decisions); one with other words asks about those words.
_FILLER = frozenset(
    """please tell show list give remind again yet all any anything something everything thing things
    now today currently right still here there project team us our your my their
    made make taken took reached""".split()  # noqa: SIM905
)
#: The words of no subject in every language the phrases are read in.
_FUNCTION_WORDS = NOT_TOPICS | _FILLER | frozenset(w for code in STEMMERS for w in not_topics(code))


def asked_alone(query: str, phrase: str) -> bool:
    """Whether `query` asks only what its `phrase` asks ("what did we decide?", "what is still
    open?"), with no word of its own about a subject ("why did we choose PostgreSQL?", "is the window
    still open?"): the first is answered by the whole list (the decisions, the open work), the
    second by the memories of its words, the list only leaning on them (decision 319)."""
    rest = _folded(query).replace(phrase, " ", 1)
    return not [w for w in tokens(rest) if len(w) > 2 and not w.isdigit() and w not in _FUNCTION_WORDS]


def phrase_words(query: str, phrase: str) -> frozenset[str]:
    """The words of `query` that make its `phrase` (folded, and as the query spells them): a question
    asked only by the phrase is not searched for them, as a failure phrase asked alone is not
    (`failures.Asked.form`). "Which tasks are late?" searched for "task", and ranked every task that
    says it, the newest first, above the overdue ones the open-work list offers."""
    words = set(query_tokens(phrase))
    return frozenset(words | {w for w in query_tokens(query) if without_accents(w) in words})


def _folded(query: str) -> str:
    return without_accents(query).replace("\u2019", "'")


def open_work_phrase(query: str) -> str:
    """The phrase of `query` that asks about open work, as written in it folded; "" when none."""
    found = _OPEN_WORK.search(_folded(query))
    return found[0] if found else ""


def rules_phrase(query: str) -> str:
    """The phrase of `query` that asks which rules are in force, as written in it folded; "" when none."""
    found = _RULE.search(_folded(query))
    return found[0] if found else ""


def decisions_phrase(query: str) -> str:
    """The phrase of `query` that asks what was decided, as written in it folded; "" when none."""
    found = _DECISION.search(_folded(query))
    return found[0] if found else ""
