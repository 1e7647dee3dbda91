"""Whether a recall query asks about open work ("what is left to do", "next steps", "where did we
leave off"), so that its plan adds the open tasks and the held slots (decision 293).

Such a question is worded with words no memory holds ("left", "next", "leave off"), so the lexical
channel finds nothing and an agent that asked it without `task_intent: resume_work` got no answer
at all. Only phrases are read, never a lone common word: "next" or "do" alone is in every other
question ("what did she do next summer"). English and the six other languages `recall` stems,
matched in lower case without accents (`languages.without_accents`)."""

from __future__ import annotations

import re

from kaeru.domain.languages import without_accents

_PHRASES = (
    # English
    r"(?:left|still|remain(?:s|ing)?|needs?) to (?:be )?(?:do|done|finish(?:ed)?|fix(?:ed)?|build|built|ship(?:ped)?)",
    r"to-?dos?|to do list",
    r"next steps?|what(?:'s| is| are)? next|(?:should|shall|can|to) (?:i |we )?(?:do|work on|tackle|pick up) next",
    r"(?:open|pending|remaining|unfinished|outstanding|in-progress|in progress) (?:tasks?|work|items?|issues?)",
    r"where (?:was i|were we|did (?:i|we) (?:leave|stop)|(?:i|we) left off)|(?:leave|left) off",
    r"what (?:was|were) (?:i|we) (?:doing|working on)",
    # German
    r"noch (?:zu tun|offen)|offene (?:aufgaben|punkte)|nachste schritte|wo (?:war|waren) (?:ich|wir) stehen ?geblieben",
    # French
    r"reste a faire|(?:taches?|travaux) (?:en cours|restante?s?|a faire)|prochaines? etapes?",
    # Spanish
    r"(?:queda|falta) por hacer|tareas pendientes|proximos pasos",
    # Italian
    r"resta da fare|(?:attivita|compiti) (?:in sospeso|da fare)|prossimi passi",
    # Portuguese
    r"falta fazer|tarefas pendentes|proximos passos",
    # Dutch
    r"nog te doen|openstaande (?:taken|punten)|volgende stappen",
)
_OPEN_WORK = re.compile(r"(?<!\w)(?:" + "|".join(_PHRASES) + r")(?!\w)")


def open_work_phrase(query: str) -> str:
    """The phrase of `query` that asks about open work, as written in it folded; "" when none."""
    found = _OPEN_WORK.search(without_accents(query).replace("\u2019", "'"))
    return found[0] if found else ""
