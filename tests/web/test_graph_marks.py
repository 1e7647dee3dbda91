"""Every node type the vault has is drawn with its own letters, legible on its own colour: the
graph told types apart by colour alone (WCAG 1.4.1), and `summary` had no colour of its own either.
The browser tests (`test_accessibility.py`) check the drawn page; this checks every type, including
those the fixture has none of."""

from __future__ import annotations

from kaeru.domain.model import NodeType
from kaeru.web import graph
from tests.web.test_accessibility import contrast


def _rgb(colour: str) -> str:
    full = colour if len(colour) == 7 else "#" + "".join(c * 2 for c in colour[1:])
    return "rgb({}, {}, {})".format(*(int(full[k : k + 2], 16) for k in (1, 3, 5)))


def test_every_type_has_its_own_letters_and_colour_and_its_letters_keep_4_5_to_1() -> None:
    kinds = [t.value for t in NodeType]
    assert [graph.GLYPHS.get(k) for k in kinds if k not in graph.GLYPHS] == []
    assert len({graph.GLYPHS[k] for k in kinds}) == len(kinds), "two types share their letters"
    assert len({graph.COLOURS.get(k) for k in kinds}) == len(kinds), "two types share a colour, or one has none"
    for kind in kinds:
        colour = graph.COLOURS[kind]
        assert contrast(_rgb(graph.ink(colour)), _rgb(colour)) >= 4.5, kind
