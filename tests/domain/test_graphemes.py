"""Cuts between what a reader sees as one character, and a text's terminal columns (`domain/graphemes`)."""

from __future__ import annotations

from kaeru.domain.graphemes import MAX_CLUSTER, cluster_end, clusters, display_width, shortened

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # four people joined by U+200D
FLAGS = "\U0001f1ef\U0001f1f5\U0001f1eb\U0001f1f7"  # JP, FR: two pairs of regional indicators


def test_a_cut_keeps_whole_clusters() -> None:
    long = "findme " + FAMILY * 1000
    kept = shortened(long, 2000)
    assert len(kept) <= 2000 and kept.endswith(FAMILY) and (len(kept) - 7) % len(FAMILY) == 0
    accents = "e\u0301" * 3000
    assert shortened(accents, 2001) == "e\u0301" * 1000  # not the next `e` without its accent
    assert shortened("x" + FLAGS, 4) == "x\U0001f1ef\U0001f1f5"  # not JP and half of FR
    assert shortened("a\U0001f44d\U0001f3fd", 2) == "a"  # the skin tone stays with its hand
    assert shortened("ab\u2764\ufe0f", 3) == "ab"  # the emoji presentation selector too
    assert shortened("line\r\nnext", 5) == "line"  # CR LF is one
    assert shortened("short", 10) == "short"


def test_a_cut_always_keeps_something() -> None:
    """A cluster longer than what is kept, or longer than any real one, is cut where asked: a page
    that kept nothing would never end."""
    assert cluster_end(FAMILY, 5) == 5
    assert cluster_end("ab" + FAMILY, 5) == 2
    assert cluster_end("ab" + FAMILY, 5, floor=2) == 5
    zalgo = "e" + "\u0301" * (MAX_CLUSTER * 3)
    assert cluster_end(zalgo, MAX_CLUSTER * 2) == MAX_CLUSTER * 2


def test_clusters() -> None:
    assert list(clusters(FLAGS + "x\U0001f1fa")) == ["\U0001f1ef\U0001f1f5", "\U0001f1eb\U0001f1f7", "x", "\U0001f1fa"]
    assert list(clusters("a\r\nb\u0301" + FAMILY)) == ["a", "\r\n", "b\u0301", FAMILY]
    assert list(clusters("")) == []


def test_display_width() -> None:
    assert display_width("ab") == 2
    assert display_width("東京") == 4  # wide
    assert display_width("ＡＢ") == 4  # fullwidth
    assert display_width("ｶﾀｶﾅ") == 4  # halfwidth: one column each
    assert display_width("cafe\u0301") == 4  # the accent draws over its letter
    assert display_width(FAMILY) == 2
    assert display_width("\U0001f1ef\U0001f1f5") == 2
