"""Where an initiative's former name went: renamed, merged into another, or deleted.

Several agents work one project, each with the project's name in its instructions. When one of them
renamed or merged the initiative, the others' next write to the old name created a new, empty
initiative of that name — the project split silently (SPEC 1.3), and their `context` lost its rules;
a read said only "no initiative named …". The vault keeps every name an initiative held
(`initiative_names`), every end (`initiative_ends`) and, on the target, the names merged into it
(`merged_from`): a call naming a former name is now told where it went, and a write to it is
refused rather than starting a second project under the old name.

A token limited to some initiatives is told where a name went only when its grants reach the
initiative now holding it. When they do not (its grant names the old name, which a merge, or a
rename by someone else, left behind), it is told that the initiative moved out of its grants, never
where: a read says so rather than a bare "no initiative named", and a write is refused as `forbidden`
rather than starting a second project under the old name, which it did before.
"""

from __future__ import annotations

from dataclasses import dataclass

from kaeru.errors import Forbidden, UnknownInitiative
from kaeru.service import grants
from kaeru.storage.base import Session

#: The initiative property listing the initiatives merged into it: `[{"name", "at"}]`.
MERGED_FROM = "merged_from"
#: What a limited token is told of a name whose initiative now goes by one outside its grants.
MOVED_OUT = (
    "this initiative was renamed or merged into one your token has no grant for; ask the vault's owner "
    "to grant it (`kaeru token grant`)"
)


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
    #: Moved into an initiative outside the caller's grants (`current` is then None: never told).
    hidden: bool = False

    def said(self) -> str:
        day = self.at[:10]
        if self.hidden:
            return f"{self.name!r}: {MOVED_OUT}"
        if self.current is None:
            return f"an initiative named {self.name!r} was deleted on {day}"
        return f"{self.name!r} was {self.how} {self.current!r} on {day}"


class FormerNames:
    """What became of the names no live initiative holds, and the visible names a misspelt one may
    mean, read only when a name is not found, and only as much as the question needs: the names of
    the live initiatives (not their records), the name history and ends of the name asked about, and
    the few initiatives that took others in by a merge. Reading every initiative, its whole name
    history and every ended one made a new initiative's note, or a `context` of a misspelt name,
    cost as much as the vault has initiatives, and an importer slowed with each initiative it made.
    The live names are read once per instance; what became of a name, once per name."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._all: list[str] | None = None
        self._visible: list[str] | None = None
        self._of: dict[str, FormerName | None] = {}

    def names(self) -> list[str]:
        """The names of every live initiative, in no particular order (read at the first use)."""
        if self._all is None:
            self._all = self._session.initiative_name_list()
        return self._all

    def visible_names(self) -> list[str]:
        """The names of the live initiatives the caller's grants let it see."""
        if self._visible is None:
            self._visible = grants.visible_names(self.names())
        return self._visible

    def of(self, name: str) -> FormerName | None:
        """The latest thing that happened to `name`, if an initiative once held it (among those the
        caller's grants let it see)."""
        if name not in self._of:
            self._of[name] = self._latest(name)
        return self._of[name]

    def hint(self, name: str) -> str:
        """What follows "no initiative named {name!r}": where a former name went, else the names it
        may be a misspelling of."""
        moved = self.of(name)
        if moved is not None and moved.hidden:
            return f": {MOVED_OUT}"
        if moved is not None and moved.current is not None:
            return f": {moved.said()}; use {moved.current!r}"
        from kaeru.domain.similar import suggest  # imported when first needed (decision 16.S1)

        close = suggest(name, self.visible_names())
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return hint + (f" ({moved.said()})" if moved is not None else "")

    def _latest(self, name: str) -> FormerName | None:
        """Renamed (a closed span of a live initiative's name history), merged (the name among a live
        initiative's `merged_from`) or deleted (an ended initiative's last name, not ended by one of
        those merges): the latest, the first of equals in that order. When the latest is a move into an
        initiative outside the caller's grants, the latest move it may follow; else that move,
        `hidden`, its new name dropped: a token granted the old name learns that it moved out of
        reach, not where (such a move was dropped altogether, and the token's next write started a
        second project under the old name)."""
        events = [FormerName(name, "renamed to", now, at) for now, at in self._session.former_name_spans(name)]
        for holder, properties in self._session.initiatives_with_property(MERGED_FROM):
            for merged in properties.get(MERGED_FROM) or ():
                if isinstance(merged, dict) and merged.get("name") == name and isinstance(merged.get("at"), str):
                    events.append(FormerName(name, "merged into", holder, merged["at"]))
        merges = {e.at for e in events if e.how == "merged into"}
        events.extend(
            FormerName(name, "deleted", None, ended.ended_at)
            for ended in self._session.ended_named(name)
            if ended.ended_at not in merges
        )
        if not events:
            return None
        visible = set(grants.visible_names(e.current for e in events if e.current is not None))
        latest = max(events, key=lambda e: e.at)
        if latest.current is None or latest.current in visible:
            return latest
        # The latest went out of reach: an earlier move the caller may follow is still the better
        # answer (a write is refused either way); failing that, the move out of reach, unnamed.
        seen = [e for e in events if e.current in visible]
        return max(seen, key=lambda e: e.at) if seen else FormerName(name, latest.how, None, latest.at, hidden=True)


def refuse_former_name(session: Session, name: str, known: FormerNames | None = None) -> FormerName | None:
    """Before a write creates the initiative `name`: refuse it when another initiative holds it now
    (renamed or merged: a write under the old name started a second, empty project beside it, SPEC
    1.3, and that project's `context` lost the rules), as `forbidden` when it is outside the caller's
    grants (never saying which it is); else what became of the name, if anything
    (a deleted initiative's: the new one is another), for the `new_initiative` warning. `known`:
    what the call has read of the vault's names already."""
    moved = (known or FormerNames(session)).of(name)
    if moved is not None and moved.hidden:
        raise Forbidden(f"no write to {name!r}: {MOVED_OUT}", field="initiative")
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
