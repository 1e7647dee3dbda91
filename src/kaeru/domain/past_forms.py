"""The past forms of irregular English verbs, for `recall` to find an event asked about in the past.

A question in the simple past puts its verb in the base form after `did` — "When did she go
camping?", "What did he buy?" — while the memory that answers tells it in the past: "we went
camping", "I bought a…". A Snowball stem joins a verb's regular forms (`painted` → `paint`), not
its irregular ones (`went` is not `go`), so for an irregular verb the word question and memory
share was two words to recall. For a question in the past, each of its verbs in the base form is
also looked for in its past forms (simple past and participle: "I've bought"), counted as the
same word; nothing else changes, and the index (which holds stems) is untouched.

One way only, from base to past: a past form names one verb, while its base's stem is also every
other use of the base and of what Snowball stems the same (`meet` is the stem of `meeting`), so a
question that says `brought` asked as `bring` would find every `bring`. And only after `did`: a
question without it is mostly not about a told past — a request's verb ("give me a summary")
would also count `given`, a question in the present ("what does she make?") `made`.
Left out: verbs whose base is a stop word (`be`, `do`, `have`: never asked), and past forms that
are more often another word or a piece of a contraction, which would join unrelated memories:
`won` (`won't` is read as `won` and `t`), `lay`, `bore` (`boring` stems to `bore`), `rose`,
`ground`, `wound`.
"""

from __future__ import annotations

from collections.abc import Iterable

from kaeru.domain.stopwords import STOP_WORDS
from kaeru.domain.text import stem

#: Each line: a verb's base form, then its irregular past and past participle (one when the same).
_TABLE = """
arise arose arisen
awake awoke awoken
become became
begin began begun
bend bent
bite bit bitten
bleed bled
blow blew blown
break broke broken
breed bred
bring brought
build built
buy bought
catch caught
choose chose chosen
cling clung
come came
creep crept
deal dealt
dig dug
draw drew drawn
dream dreamt
drink drank drunk
drive drove driven
eat ate eaten
fall fell fallen
feed fed
feel felt
fight fought
find found
flee fled
fly flew flown
forbid forbade forbidden
forget forgot forgotten
forgive forgave forgiven
freeze froze frozen
get got gotten
give gave given
go went gone
grow grew grown
hang hung
hear heard
hide hid hidden
hold held
keep kept
kneel knelt
know knew known
lead led
leave left
lend lent
light lit
lose lost
make made
mean meant
meet met
pay paid
ride rode ridden
ring rang rung
run ran
say said
see saw seen
seek sought
sell sold
send sent
shake shook shaken
shine shone
shoot shot
show shown
shrink shrank shrunk
sing sang sung
sink sank sunk
sit sat
sleep slept
slide slid
speak spoke spoken
speed sped
spend spent
spin spun
steal stole stolen
stick stuck
sting stung
strike struck
swear swore sworn
sweep swept
swim swam swum
swing swung
take took taken
teach taught
tear tore torn
tell told
think thought
throw threw thrown
understand understood
wake woke woken
wear wore worn
weep wept
write wrote written
"""


def _build() -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for line in _TABLE.split("\n"):
        words = line.split()
        if not words or words[0] in STOP_WORDS:
            continue
        base = stem(words[0])
        others = tuple(dict.fromkeys(s for s in (stem(w) for w in words[1:]) if s != base))
        if others:
            out[base] = others
    return out


#: A verb's base stem → the stems of its irregular past forms.
PAST_FORMS = _build()
#: What `past_forms` gives a question: an asked stem → itself and its past forms' stems.
Alternatives = dict[str, tuple[str, ...]]
#: The auxiliary of a question in the simple past ("When did she go…?", "Why didn't he…?").
PAST_AUXILIARIES = frozenset({"did", "didn"})


def past_forms(stems: Iterable[str], query_tokens: Iterable[str]) -> Alternatives:
    """For a question in the past (`PAST_AUXILIARIES` among its `query_tokens`), each of its
    `stems` that is an irregular verb's base, with the stems of its past forms (itself first);
    empty for any other question."""
    if PAST_AUXILIARIES.isdisjoint(query_tokens):
        return {}
    found = PAST_FORMS
    return {s: (s, *found[s]) for s in stems if s in found}


def expand(stems: Iterable[str], forms: Alternatives) -> list[str]:
    """`stems` with every form `forms` gives them, once each: what to ask of the index."""
    return list(dict.fromkeys(f for s in stems for f in forms.get(s, (s,))))
