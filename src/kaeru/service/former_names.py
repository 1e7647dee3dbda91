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
from kaeru.storage.base import EndedInitiative, Initiative, Session

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


class FormerNames:
    """What became of the names no live initiative holds, and the visible names a misspelt one may
    mean, read from the vault once for a call however many names it asks about: a search naming
    several unknown initiatives read every initiative and its name history once for each, and a new
    initiative's write read every initiative twice, so in a vault of many initiatives an importer
    slowed with each initiative it made. Read only when a name is not found (`initiatives`: the
    live initiatives, when the caller has read them already)."""

    def __init__(self, session: Session, initiatives: list[Initiative] | None = None) -> None:
        self._session = session
        self._live = initiatives
        self._names: list[str] | None = None
        self._events: dict[str, list[FormerName]] | None = None
        self._ends: dict[str, list[EndedInitiative]] | None = None

    def live(self) -> list[Initiative]:
        """Every live initiative (read at the first use)."""
        if self._live is None:
            self._live = self._session.all_initiatives()
        return self._live

    def visible_names(self) -> list[str]:
        """The names of the live initiatives the caller's grants let it see."""
        if self._names is None:
            self._names = grants.visible_names(i.name for i in self.live())
        return self._names

    def of(self, name: str) -> FormerName | None:
        """The latest thing that happened to `name`, if an initiative once held it (among those the
        caller's grants let it see)."""
        events = list(self._renames_and_merges().get(name, ()))
        merges = {e.at for e in events if e.how == "merged into"}
        events.extend(
            FormerName(name, "deleted", None, ended.ended_at)
            for ended in self._ended().get(name, ())
            if ended.ended_at not in merges
        )
        visible = set(grants.visible_names(e.current for e in events if e.current is not None))
        seen = [e for e in events if e.current is None or e.current in visible]
        return max(seen, key=lambda e: e.at) if seen else None

    def hint(self, name: str) -> str:
        """What follows "no initiative named {name!r}": where a former name went, else the names it
        may be a misspelling of."""
        moved = self.of(name)
        if moved is not None and moved.current is not None:
            return f": {moved.said()}; use {moved.current!r}"
        from kaeru.domain.similar import suggest  # imported when first needed (decision 16.S1)

        close = suggest(name, self.visible_names())
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return hint + (f" ({moved.said()})" if moved is not None else "")

    def _renames_and_merges(self) -> dict[str, list[FormerName]]:
        """Each former name of a live initiative (a closed span of its name history, or an initiative
        merged into it) → where it went: the whole history in one statement, not one naming every
        live id."""
        if self._events is None:
            live = {i.id: i for i in self.live()}
            events: dict[str, list[FormerName]] = {}
            for initiative_id, spans in self._session.name_history(None).items():
                if (holder := live.get(initiative_id)) is None:
                    continue  # an ended initiative's names: `_ended` says where they went
                for span in spans:
                    if span.valid_to is not None and holder.name != span.name:
                        events.setdefault(span.name, []).append(
                            FormerName(span.name, "renamed to", holder.name, span.valid_to)
                        )
            for initiative in live.values():
                for merged in initiative.properties.get(MERGED_FROM) or ():
                    if isinstance(merged, dict) and isinstance(merged.get("at"), str):
                        name = merged.get("name")
                        if isinstance(name, str):
                            events.setdefault(name, []).append(
                                FormerName(name, "merged into", initiative.name, merged["at"])
                            )
            self._events = events
        return self._events

    def _ended(self) -> dict[str, list[EndedInitiative]]:
        """The initiatives merged away or deleted, by their last name, oldest end first."""
        if self._ends is None:
            self._ends = {}
            for initiative in self._session.ended_initiatives():
                self._ends.setdefault(initiative.name, []).append(initiative)
        return self._ends


def former(session: Session, name: str) -> FormerName | None:
    """The latest thing that happened to `name`, if an initiative once held it (`FormerNames.of`)."""
    return FormerNames(session).of(name)


def refuse_former_name(session: Session, name: str, known: FormerNames | None = None) -> FormerName | None:
    """Before a write creates the initiative `name`: refuse it when another initiative holds it now
    (renamed or merged: a write under the old name started a second, empty project beside it, SPEC
    1.3, and that project's `context` lost the rules); else what became of the name, if anything
    (a deleted initiative's: the new one is another), for the `new_initiative` warning. `known`:
    what the call has read of the vault's names already."""
    moved = (known or FormerNames(session)).of(name)
    if moved is not None and moved.current is not None:
        raise UnknownInitiative(
            f"no initiative named {name!r}: {moved.said()}; write to {moved.current!r} (to start a new "
            f"initiative named {name!r}, make it under another name and rename it)",
            field="initiative",
        )
    return moved


def unknown_hint(session: Session, name: str, known: FormerNames | None = None) -> str:
    """What follows "no initiative named {name!r}" (`FormerNames.hint`); `known`: what the call has
    read of the vault's names already, so that several unknown names read them once."""
    return (known or FormerNames(session)).hint(name)
