"""Did-you-mean suggestions: case-insensitive equality, containment, edit distance."""

from __future__ import annotations

from kaeru.domain.similar import edit_distance, same_project, suggest


def test_case_insensitive_match_is_suggested() -> None:
    """A different spelling of case finds the existing name."""
    assert suggest("Kaeru-Memory", ["kaeru-memory", "website"]) == ["kaeru-memory"]


def test_containment_is_suggested() -> None:
    """A shorter or longer form of a name finds it."""
    assert "kaeru-memory" in suggest("kaeru", ["kaeru-memory", "website"])
    assert "kaeru" in suggest("kaeru-memory-v2", ["kaeru", "website"])


def test_small_typos_are_suggested() -> None:
    """A transposition in a long name and a single-letter typo find the name."""
    assert suggest("kaeru-memroy", ["kaeru-memory", "website"]) == ["kaeru-memory"]
    assert suggest("webste", ["kaeru-memory", "website"]) == ["website"]


def test_unrelated_names_are_not_suggested() -> None:
    """Names that are not close are not offered."""
    assert suggest("zebra", ["kaeru-memory", "website"]) == []


def test_the_name_itself_is_not_suggested() -> None:
    """The exact same name is not a suggestion for itself."""
    assert suggest("website", ["website"]) == []


def test_best_suggestion_first_and_limit() -> None:
    """Another case of the name first, then the closest name containing it, then the rest by the
    edits between them; at most `limit` come back."""
    names = ["kaeru-memroy", "kaeru-memory-old", "KAERU-MEMORY", "other"]
    assert suggest("kaeru-memory", names) == ["KAERU-MEMORY", "kaeru-memory-old", "kaeru-memroy"]
    assert suggest("kaeru-memory", names, limit=1) == ["KAERU-MEMORY"]
    assert suggest("kaeru-memory", names[:2], limit=1) == ["kaeru-memory-old"]


def test_edit_distance_basics() -> None:
    """Levenshtein distance on simple pairs."""
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    assert edit_distance("same", "same") == 0


def test_edit_distance_counts_a_transposition_as_one_edit() -> None:
    """Two adjacent letters swapped are one edit (optimal string alignment), not two."""
    assert edit_distance("alpah", "alpha") == 1
    assert edit_distance("ab", "ba") == 1
    assert edit_distance("abcdef", "badcfe") == 3
    assert edit_distance("abcdefghijkl", "z", cap=3) == 4


def test_transposed_letters_in_a_short_name_are_suggested() -> None:
    """`alpah` finds `alpha`: with Levenshtein it was two edits, beyond a five-letter name's tolerance."""
    assert suggest("alpah", ["alpha", "beta", "gamma"]) == ["alpha"]
    assert suggest("lapha", ["alpha", "beta"]) == ["alpha"]
    assert suggest("btez", ["beta"]) == []  # a transposition and a substitution: too far for four letters
    assert suggest("btea", ["beta", "alpha"]) == ["beta"]


def test_transposition_ignores_case() -> None:
    """Case differences cost nothing on top of the transposition."""
    assert suggest("ALPAH", ["alpha"]) == ["alpha"]
    assert suggest("alpah", ["Alpha"]) == ["Alpha"]


def test_the_name_a_part_was_given_of_comes_before_closer_typos() -> None:
    """`kaeru` offers `kaeru-memory` first, then its typos by distance: every letter typed is right
    and in place in `kaeru-memory`, where `kaera` needs a wrong letter. Ranked by edits alone the
    one-edit neighbours took every place. Only the closest containing name moves up."""
    assert suggest("kaeru", ["kaeru-memory", "kaeri", "karu", "kaera"]) == ["kaeru-memory", "kaera", "kaeri"]
    assert suggest("alpha", ["alpha-two", "lapha"]) == ["alpha-two", "lapha"]
    assert suggest("alpha", ["alphas", "lapha"]) == ["alphas", "lapha"]
    assert suggest("kaeru", ["kaeru-memory", "kaeru-memory-old"]) == ["kaeru-memory", "kaeru-memory-old"]
    assert suggest("alpha", ["alpha-two-three", "alpha-two", "lapha", "alpah"]) == ["alpha-two", "alpah", "lapha"]


def test_a_name_contained_in_the_typed_one_keeps_a_place_but_not_the_first() -> None:
    """`account-paper` offers `account` (the name it begins with) in the last place rather than a
    third typo three letters off; a typo's own first words never come before the name it was meant
    for, even with one place."""
    names = ["account", "account-parser", "account-game", "account-order"]
    assert suggest("account-paper", names) == ["account-parser", "account-game", "account"]
    typo = ["camera", "audit", "camera-audit", "camera-audit-quasar"]
    assert suggest("camera-audit-quaasr", typo, limit=1) == ["camera-audit-quasar"]
    assert suggest("camera-audit-quaasr", typo) == ["camera-audit-quasar", "camera-audit", "camera"]


def test_unrelated_short_names_are_not_suggested_for_a_transposition() -> None:
    """A transposition plus another change is too far for a short name; unrelated names stay out."""
    assert suggest("alpah", ["delta", "omega", "alps-ski"]) == []
    assert suggest("xlpah", ["alpha"]) == []


def test_same_project_folds_case_width_and_separators() -> None:
    """`Web Shop`, `web_shop`, `webshop` and full-width `ｗｅｂ－ｓｈｏｐ` are `web-shop` spelled otherwise."""
    spelled = ["Web Shop", "web_shop", "webshop", "ｗｅｂ－ｓｈｏｐ", "WEB.SHOP", "(web shop)"]
    assert same_project("web-shop", spelled) == sorted(spelled)
    assert same_project("東京 都庁", ["東京都庁", "東京・都庁"]) == ["東京・都庁", "東京都庁"]


def test_same_project_takes_a_small_typo_of_a_long_name() -> None:
    """One edit in a word of seven letters or more is a typo of it (a substitution from nine), two from fourteen."""
    assert same_project("webshop", ["webshp", "webshops", "wbeshop", "website"]) == ["wbeshop", "webshops", "webshp"]
    assert same_project("customer-onboarding", ["custmer-onbaording"]) == ["custmer-onbaording"]
    assert same_project("customer-onboarding", ["customeronbaording"]) == ["customeronbaording"]
    assert same_project("planner-tool", ["planer-tool", "plannertool"]) == ["plannertool", "planer-tool"]


#: Names a letter apart that name different things: the letter falls in a short word of a long name,
#: or is a substitution in a word of fewer than nine letters.
DIFFERENT_PROJECTS = [
    ("project-a", "project-b"),
    ("service-a", "service-b"),
    ("phase-ii", "phase-iii"),
    ("mobile-app", "mobile-api"),
    ("frontend-ios", "frontend-os"),
    ("webshop-v", "webshop-w"),
    ("planning", "planting"),
    ("shipping", "shopping"),
]


def test_same_project_counts_typos_word_by_word() -> None:
    """A letter changed in a short word is another project however long the whole name is, and a
    letter substituted in an eight-letter word makes another word: none of these are merge offers."""
    for a, b in DIFFERENT_PROJECTS:
        assert same_project(a, [b]) == [], (a, b)
        assert same_project(b, [a]) == [], (b, a)


def test_same_project_keeps_words_apart_when_separators_differ() -> None:
    """Running the words together does not hide a changed short word: `mobileapi` is not `mobile-app`."""
    for a, b in [
        ("frontend-ios", "frontendos"),
        ("mobile-app", "mobileapi"),
        ("project-a", "projectb"),
        ("frontend-iOS", "frontend-os"),
        ("web-shop", "webshp"),
        ("kaeru-memory", "kaeru-memroy"),
    ]:
        assert same_project(a, [b]) == [], (a, b)
        assert same_project(b, [a]) == [], (b, a)
    assert same_project("WebShop", ["web-shop", "Web Shop", "webshop"]) == ["Web Shop", "web-shop", "webshop"]
    assert same_project("APIGateway", ["api-gateway"]) == ["api-gateway"]


def test_same_project_is_not_containment() -> None:
    """A name inside another is a different project, whatever `suggest` says of it."""
    for short, long in [("shop", "shopping-list-project"), ("東京", "東京都庁の移転計画"), ("api", "api-gateway")]:
        assert suggest(short, [long]) == [long], "did-you-mean still offers it"
        assert same_project(short, [long]) == []
        assert same_project(long, [short]) == []


def test_same_project_gives_short_names_no_typo_tolerance() -> None:
    """`api` and `app`, `shop` and `ship`, `alpha` and `aloha` are different words, not typos."""
    assert suggest("api", ["app"]) == ["app"], "did-you-mean still offers it"
    assert same_project("api", ["app", "apis", "API"]) == ["API"]
    assert same_project("shop", ["ship"]) == []
    assert same_project("alpha", ["aloha", "alpah"]) == []


def test_same_project_keeps_numbers_and_signs() -> None:
    """Names that differ in a number, or short names in a sign read as a word, are different projects."""
    assert same_project("release-2025", ["release-2026", "release-2025", "Release 2025"]) == ["Release 2025"]
    assert same_project("web-shop", ["web-shop-2"]) == []
    assert same_project("C# port", ["C port", "c-port", "C#-port"]) == ["C#-port"]


def test_same_project_gives_east_asian_names_no_typo_tolerance() -> None:
    """One character of a Japanese name is a word: `大阪支店計画` and `大阪本店計画` are two plans."""
    assert same_project("大阪支店の移転計画", ["大阪本店の移転計画"]) == []
