"""Did-you-mean among many names: the name a typo was meant for is offered, first when it is closest.

A mistyped long name contains its own shorter words, and those names exist in a vault of many
initiatives (`camera`, `audit`, `camera-audit`): ranked as containment before any typo, they took
every place and the intended `camera-audit-quasar`, one swap away, was not offered at all.
"""

from __future__ import annotations

import random

from kaeru.domain.similar import edit_distance, suggest

#: The words a vault's initiative names are made of (as a probe built ten thousand of them).
VOCABULARY = """alpha beta gamma delta orion vega lyra atlas apollo hermes zeus hera titan nova pulsar quasar comet
meteor nebula galaxy billing invoice payment ledger account customer portal dashboard admin mobile android ios
web api gateway proxy cache queue worker scheduler cron backup restore migrate infra deploy kube helm terraform
ansible docker image build pipeline release canary search index crawler parser lexer compiler runtime engine
render shader physics audio video stream chat voice mail notify alert metric trace log audit auth oauth token
secret vault key crypto hash sign verify wallet market trade order cart shop store catalog inventory shipping
warehouse fleet route map geo weather sensor iot firmware kernel driver network router switch dns mesh edge cdn
blog wiki docs site landing theme plugin extension addon thesis paper research notes garden recipe fitness
budget tax family travel photo music novel poem game chess puzzle robot drone camera"""
WORDS = VOCABULARY.split()


def vault_names(count: int, seed: int = 7) -> list[str]:
    """`count` distinct names of one to three words, as people name projects."""
    rng = random.Random(seed)
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        name = "-".join(rng.choice(WORDS) for _ in range(rng.choice((1, 2, 2, 3))))
        if name in seen:
            name = f"{name}-{rng.randint(2, 99)}"
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def swapped_in_last_word(name: str, rng: random.Random) -> str | None:
    """`name` with two adjacent letters of its last word swapped (None when that changes nothing)."""
    head, _, last = name.rpartition("-")
    if len(last) < 2 or not last.isalpha():
        return None
    at = rng.randrange(len(last) - 1)
    typo = last[:at] + last[at + 1] + last[at] + last[at + 2 :]
    return None if typo == last else f"{head}-{typo}" if head else typo


def edits(a: str, b: str) -> int:
    """The distance `suggest` ranks by: letters added or lacking for a name inside the other."""
    a, b = a.casefold(), b.casefold()
    return abs(len(a) - len(b)) if a in b or b in a else edit_distance(a, b)


def test_the_probe_names_are_offered_first() -> None:
    """`camera-audit-quaasr` offers `camera-audit-quasar` first, not only the names of its words."""
    names = ["camera", "audit", "camera-audit", "camera-audit-quasar", "queue", "router", "route"]
    assert suggest("camera-audit-quaasr", names)[0] == "camera-audit-quasar"
    assert suggest("queue-router-shceduler", [*names, "queue-router-scheduler"])[0] == "queue-router-scheduler"


def test_a_swap_in_the_last_word_offers_the_intended_name_among_ten_thousand() -> None:
    """For 400 names of a 10,000-name vault, two adjacent letters of the last word swapped: the
    intended name is always offered, and nothing farther from the typo ranks before it."""
    names = vault_names(10_000)
    taken = set(names)
    rng = random.Random(11)
    tried = 0
    for name in names[::25]:
        typo = swapped_in_last_word(name, rng)
        if typo is None or typo in taken:
            continue
        tried += 1
        offered = suggest(typo, names)
        assert name in offered, (typo, offered)
        ahead = offered[: offered.index(name)]
        assert all(edits(typo, other) <= edits(typo, name) for other in ahead), (typo, offered)
    assert tried > 250
