"""Where an initiative's former name went: renamed, merged into another, or deleted.

Several agents work one project, each with the project's name in its instructions. When one of them
renamed or merged the initiative, the others' next write to the old name created a new, empty
initiative of that name — the project split silently (SPEC 1.3), and their `context` lost its rules;
a read said only "no initiative named …". The vault keeps every name an initiative held
(`initiative_names`), every end (`initiative_ends`) and, on the target, the names merged into it
(`merged_from`): a call naming a former name is now told where it went, and a write to it is
refused rather than starting a second project under the old name.
"""

from __future__ import annotations

from dataclasses import dataclass

from kaeru.errors import UnknownInitiative
from kaeru.service import grants
from kaeru.storage.base import Session

#: The initiative property listing the initiatives merged into it: `[{"name", "at"}]`.
MERGED_FROM = "merged_from"


@dataclass(frozen=True)
class FormerName:
    """What became of an initiative name no live initiative holds."""

    name: str
    #: "renamed to", "merged into" or "deleted".
    how: str
    #: The live initiative the name now leads to (None: deleted).
    current: str | None
    #: When it stopped being the name (a stored timestamp).
    at: str

    def said(self) -> str:
        day = self.at[:10]
        if self.current is None:
            return f"an initiative named {self.name!r} was deleted on {day}"
        return f"{self.name!r} was {self.how} {self.current!r} on {day}"


def former(session: Session, name: str) -> FormerName | None:
    """The latest thing that happened to `name`, if an initiative once held it (among those the
    caller's grants let it see). Read only when a name is not found: it reads every initiative's
    names and properties, which are few."""
    live = {i.id: i for i in session.all_initiatives()}
    events: list[FormerName] = []
    for initiative_id, spans in session.name_history(list(live)).items():
        for span in spans:
            if span.name == name and span.valid_to is not None and live[initiative_id].name != name:
                events.append(FormerName(name, "renamed to", live[initiative_id].name, span.valid_to))
    for initiative in live.values():
        for merged in initiative.properties.get(MERGED_FROM) or ():
            if isinstance(merged, dict) and merged.get("name") == name and isinstance(merged.get("at"), str):
                events.append(FormerName(name, "merged into", initiative.name, merged["at"]))
    merges = {e.at for e in events if e.how == "merged into"}
    events.extend(
        FormerName(name, "deleted", None, ended.ended_at)
        for ended in session.ended_initiatives()
        if ended.name == name and ended.ended_at not in merges
    )
    visible = set(grants.visible_names(e.current for e in events if e.current is not None))
    seen = [e for e in events if e.current is None or e.current in visible]
    return max(seen, key=lambda e: e.at) if seen else None


def refuse_former_name(session: Session, name: str) -> FormerName | None:
    """Before a write creates the initiative `name`: refuse it when another initiative holds it now
    (renamed or merged: a write under the old name started a second, empty project beside it, SPEC
    1.3, and that project's `context` lost the rules); else what became of the name, if anything
    (a deleted initiative's: the new one is another), for the `new_initiative` warning."""
    moved = former(session, name)
    if moved is not None and moved.current is not None:
        raise UnknownInitiative(
            f"no initiative named {name!r}: {moved.said()}; write to {moved.current!r} (to start a new "
            f"initiative named {name!r}, make it under another name and rename it)",
            field="initiative",
        )
    return moved


def unknown_hint(session: Session, name: str, names: list[str] | None = None) -> str:
    """What follows "no initiative named {name!r}": where a former name went, else the names it
    may be a misspelling of (`names`: the visible initiatives, read here when not given)."""
    moved = former(session, name)
    if moved is not None and moved.current is not None:
        return f": {moved.said()}; use {moved.current!r}"
    from kaeru.domain.similar import suggest  # imported when first needed (decision 16.S1)

    if names is None:
        names = grants.visible_names(i.name for i in session.all_initiatives())
    close = suggest(name, names)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return hint + (f" ({moved.said()})" if moved is not None else "")
