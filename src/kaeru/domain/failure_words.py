"""Whether a recall query asks what went wrong ("what went wrong?", "what broke?", "any known
bugs?", "which hypotheses were refuted?", "what should I avoid?"), and the words a memory of a
failure is tagged with (decision 471).

Such a question is worded with words no memory of a failure holds: a bug report says what fails,
not that something "went wrong"; a refuted claim says what was believed, its refutation is its
status (kept out of the word index, decision 34). So the lexical channel found nothing or noise,
even under `task_intent: debug_failure`, whose priors only reweight what another channel found.
As `open_work` (decisions 293, 319): only phrases are read, never a lone common word ("wrong" or
"problem" alone is in every other question), in English and the six other languages `recall`
stems, matched in lower case without accents; and, without word boundaries, Japanese, Chinese
and Korean. `FAILURE_WORDS` are the words whose stems a failure's tags hold: the `topic:` tags a
note derives from its most prominent words ("Bug: the webhook fails …" → `topic:bug`), and the
tags its writer gives (`bug`, `incident`, `regression`)."""

from __future__ import annotations

import re

from kaeru.domain.languages import without_accents

#: "last time", "so far": said after the phrase, not about a subject.
_WHEN = r"(?: (?:(?:the )?last time|this time|before|previously|so far|recently|lately|again))?"
_SUBJECTS = r"(?:bugs?|problems?|failures?|errors?|regressions?|incidents?|mistakes?|pitfalls?|gotchas?)"
#: "… did we hit", "… have we run into": the rest of a question about the failures met.
_MET = (
    r" (?:did|have|has|had|do) (?:we|i|you|they) (?:hit|run into|ran into|encounter(?:ed)?|face(?:d)?|"
    r"see|seen|saw|have|had|get|got|find|found|make|made|introduce(?:d)?|run across|come across)"
)
_PHRASES = (
    # English
    r"what(?:'s| is| has| had)? (?:went|go(?:es)?|gone|going|could go|can go|might go) (?:wrong|badly|awry)" + _WHEN,
    r"what(?:'s| is| has| had| was)? (?:broke|broken|failed|failing|fails)" + _WHEN,
    r"what (?:didn't|did not|doesn't|does not|hasn't|has not|won't|wouldn't) work(?:ed)?" + _WHEN,
    r"(?:what|which|things?) (?:should|must|do|can|shall|to) (?:i |we |you )?(?:avoid|watch out for|be careful (?:about|with)|not do)",
    r"(?:what|which|any|known|recent|past|previous|main|biggest|common) " + _SUBJECTS + f"(?:{_MET})?" + _WHEN,
    r"(?:what|which|any) issues" + _MET + _WHEN,  # "which issues are open" asks about open work
    r"what(?:'s| is| was) wrong",
    r"(?:(?:what|which|any) )?(?:hypothes[ie]s|claims?|theories|assumptions) (?:(?:were|was|have been|has been|got|turned out) )?"
    r"(?:refuted|disproved|disproven|falsified|rejected|ruled out|wrong)",
    r"(?:refuted|disproved|disproven|falsified|rejected) (?:hypothes[ie]s|claims?|theories|assumptions)",
    r"dead ends?|lessons learn(?:ed|t)|post-?mortems?|what (?:was|were) the (?:problems?|issues?|bugs?|errors?|mistakes?)",
    # German
    r"was (?:ist|lief|ging|hat) (?:\w+ )?(?:schief|falsch)(?: ?gelaufen| ?gegangen)?|was hat nicht (?:funktioniert|geklappt)",
    r"was ist kaputt(?: gegangen)?|(?:welche|bekannte) (?:fehler|probleme|bugs)|widerlegte (?:hypothesen|annahmen)",
    r"was (?:sollte|soll|sollten|muss|mussen) (?:ich|wir|man) vermeiden",
    # French
    r"qu'est-ce qui (?:a mal tourne|n'a pas (?:marche|fonctionne)|a echoue|a casse|est casse|cloche)",
    r"(?:quels?|quelles?) (?:bugs?|problemes|erreurs|echecs)|(?:bugs?|problemes) connus|hypotheses (?:refutees|invalidees)",
    r"(?:que|qu'est-ce que) (?:dois-je|devons-nous|faut-il|je dois|nous devons) eviter",
    # Spanish
    r"que (?:salio|ha salido|fue) mal|que (?:fallo|ha fallado|no funciono|se rompio)|(?:que|cuales) (?:errores|problemas|fallos|bugs)",
    r"(?:errores|problemas|fallos|bugs) conocidos|hipotesis (?:refutadas|descartadas)|que (?:debo|debemos|hay que) evitar",
    # Italian
    r"cosa (?:e andato|e andata) storto|cosa (?:non ha funzionato|si e rotto|e fallito)|quali (?:errori|problemi|bug)",
    r"(?:errori|problemi|bug) noti|ipotesi (?:confutate|smentite)|cosa (?:devo|dobbiamo|bisogna) evitare",
    # Portuguese
    r"o que (?:deu errado|correu mal|falhou|nao funcionou|quebrou)|quais (?:erros|problemas|falhas|bugs)",
    r"(?:erros|problemas|falhas|bugs) conhecid[oa]s|hipoteses (?:refutadas|descartadas)|o que (?:devo|devemos) evitar",
    # Dutch
    r"wat (?:ging|gaat|is) (?:er )?(?:mis|fout)(?: gegaan)?|wat werkte niet|(?:welke|bekende) (?:fouten|problemen|bugs)",
    r"weerlegde (?:hypothesen|hypotheses|aannames)|wat (?:moet|moeten) (?:ik|we|wij) vermijden",
)
#: Scripts without spaces (folded as the query is).
_UNSPACED = (
    r"何が(?:問題|悪かった|失敗|うまくいかなかった)|(?:既知の|どんな)(?:バグ|不具合|問題)|失敗したこと|"
    r"出了什么问题|什么(?:地方)?出错|(?:有什么|有哪些|哪些)(?:问题|错误|bug)|"
    r"(?:무엇이|뭐가) 잘못(?:됐|되었|된)?\w*|어떤 (?:문제|버그|오류)"
)
_FAILURE = re.compile(r"(?<!\w)(?:" + "|".join(_PHRASES) + r")(?!\w)|" + without_accents(_UNSPACED))

#: The words a failure's tags hold, by the language whose stems its memory is indexed in.
FAILURE_WORDS: dict[str, tuple[str, ...]] = {
    "en": tuple(
        """bug bugs defect failure failures fail failed fails broke broken break breaks error errors crash
        crashed crashes regression wrong refuted incident outage mistake fix fixed abandoned revert
        reverted workaround problem flaky""".split()  # noqa: SIM905
    ),
    "de": ("fehler", "bug", "absturz", "kaputt", "fehlgeschlagen", "gescheitert", "problem", "regression", "behoben"),
    "fr": ("bug", "erreur", "echec", "echoue", "casse", "plantage", "probleme", "regression", "corrige"),
    "es": ("bug", "error", "fallo", "falla", "roto", "problema", "regresion", "corregido"),
    "it": ("bug", "errore", "guasto", "fallito", "rotto", "problema", "regressione", "corretto"),
    "pt": ("bug", "erro", "falha", "quebrado", "problema", "regressao", "corrigido"),
    "nl": ("bug", "fout", "kapot", "mislukt", "storing", "probleem", "regressie", "opgelost"),
}


def failure_phrase(query: str) -> str:
    """The phrase of `query` that asks what went wrong, as written in it folded; "" when none."""
    found = _FAILURE.search(without_accents(query).replace("\u2019", "'"))
    return found[0] if found else ""
