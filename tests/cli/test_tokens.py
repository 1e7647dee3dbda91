"""`kaeru token add/list/renew/revoke` as a person uses them, on both backends."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kaeru.domain.timefmt import fmt, parse_ts
from kaeru.service import Service, grants
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.cli.support import error_object, kaeru

pytestmark = pytest.mark.timeout(300)


def test_add_prints_the_token_once_list_never_shows_it_revoke_ends_it(vault: VaultSpec) -> None:
    added = kaeru(vault, "token", "add", "erin", "--initiatives", "web, infra", "--read-only")
    assert added.code == 0, added.stderr
    token = added.stdout.strip()
    assert token.startswith("kaeru_") and "\n" not in token
    assert "web, infra" in added.stderr and "read-only" in added.stderr

    listed = kaeru(vault, "token", "list")
    assert listed.code == 0 and listed.stdout.splitlines()[1].startswith("erin\tweb,infra\tread-only\t")
    assert token not in listed.stdout + listed.stderr

    message = error_object(kaeru(vault, "token", "add", "erin", as_json=True), "invalid_argument", 2)
    assert "exists" in message
    error_object(kaeru(vault, "token", "add", "bad name", as_json=True), "invalid_argument", 2)
    # Said as what it takes: "letters" read as any letter, and `ünï` was refused (CLI probe, session 38).
    accented = kaeru(vault, "token", "add", "ünï", as_json=True)
    assert "ASCII letters" in error_object(accented, "invalid_argument", 2)

    assert kaeru(vault, "token", "revoke", "erin").stdout.strip() == "revoked 'erin'"
    error_object(kaeru(vault, "token", "revoke", "erin", as_json=True), "not_found", 2)
    assert kaeru(vault, "token", "list", as_json=True).json() == {"ok": True, "tokens": [], "total": 0}


def test_revoking_the_last_token_says_that_loopback_opens_again(vault: VaultSpec) -> None:
    """Once the vault holds no token, loopback HTTP serves requests without one (decision 15.K3):
    revoking a leaked last token must not leave the server open without a word."""
    for name in ("fay", "gil"):
        assert kaeru(vault, "token", "add", name).code == 0
    first = kaeru(vault, "token", "revoke", "fay")
    assert first.code == 0 and "warning" not in first.stderr
    last = kaeru(vault, "token", "revoke", "gil", as_json=True)
    assert last.code == 0 and last.json() == {"ok": True, "revoked": "gil"}
    assert "no token is left" in last.stderr and "KAERU_AUTH_TOKEN" in last.stderr
    assert kaeru(vault, "token", "add", "hal").code == 0
    closed = kaeru(vault, "token", "revoke", "hal", KAERU_AUTH_TOKEN="an-admin-token")
    assert closed.code == 0 and "warning" not in closed.stderr  # the admin token keeps it closed


def test_help_says_how_grants_work(vault: VaultSpec) -> None:
    shown = kaeru(vault, "token", "--help")
    assert shown.code == 0 and "forbidden" in shown.stdout and "KAERU_AUTH_TOKEN" in shown.stdout


def test_a_token_for_an_initiative_the_vault_does_not_hold_is_made_with_a_warning(vault: VaultSpec) -> None:
    """A typo in `--initiatives` made a token that sees nothing, without a word (the terminal probe,
    session 48); granting one not made yet stays allowed."""
    assert kaeru(vault, "note", "-i", "webshop", "the cart keeps its items for a day").code == 0
    added = kaeru(vault, "token", "add", "ci", "--initiatives", "websop,webshop")
    assert added.code == 0, added.stderr
    assert "no initiative 'websop' (yet)" in added.stderr and "Did you mean 'webshop'?" in added.stderr
    assert "'webshop' (yet)" not in added.stderr
    as_json = kaeru(vault, "token", "add", "ci2", "--initiatives", "later", as_json=True).json()
    assert as_json["absent"] == ["later"] and as_json["initiatives"] == ["later"]


def test_expires_sets_when_a_token_ends_list_shows_it_and_renew_moves_it(vault: VaultSpec) -> None:
    added = kaeru(vault, "token", "add", "ines", "--expires", "30d", as_json=True)
    assert added.code == 0, added.stderr
    made = added.json()
    lasts = parse_ts(made["expires_at"]) - parse_ts(made["created_at"])
    assert timedelta(days=30) - timedelta(minutes=1) < lasts <= timedelta(days=30)
    listed = kaeru(vault, "token", "list", as_json=True).json()["tokens"]
    assert [(t["name"], t["expires_at"], t["expired"]) for t in listed] == [("ines", made["expires_at"], False)]
    shown = made["expires_at"][:16].replace("T", " ")  # on the user's clock, to the minute, as `history`
    assert kaeru(vault, "token", "list", KAERU_TIMEZONE="UTC").stdout.rstrip().endswith(f"\texpires {shown}")

    utc = {"KAERU_TIMEZONE": "UTC"}
    for given, stored in (
        ("2099-12-31", "2099-12-31T23:59:59.999999Z"),  # a date: through its end
        ("2099-06-01T12:00:00+02:00", "2099-06-01T10:00:00.000000Z"),
        ("2099-06-01T12:00", "2099-06-01T12:00:00.000000Z"),  # no offset: the user's zone
    ):
        renewed = kaeru(vault, "token", "renew", "ines", "--expires", given, as_json=True, **utc)
        assert renewed.json() == {"ok": True, "name": "ines", "expires_at": stored}, renewed.stderr
    lifted = kaeru(vault, "token", "renew", "ines", "--expires", "never")
    assert lifted.code == 0 and lifted.stdout.strip() == "token 'ines' never expires"
    assert kaeru(vault, "token", "list").stdout.rstrip().endswith("\tnever expires")
    error_object(kaeru(vault, "token", "renew", "nobody", "--expires", "1w", as_json=True), "not_found", 2)
    assert kaeru(vault, "token", "renew", "ines").code == 2  # --expires is what a renewal sets


def test_an_expiry_that_is_malformed_or_past_is_refused_naming_the_option(vault: VaultSpec) -> None:
    """A time ago (`2d ago`, `5m`) read as a moment would make a token that is refused at once."""
    assert kaeru(vault, "token", "add", "jo", "--expires", "1h").code == 0
    before = kaeru(vault, "token", "list", as_json=True).json()
    for value, said in (
        ("2020-01-01", "has passed"),
        ("now", "no time from now"),
        ("2d ago", "no time from now"),
        ("5m", "no time from now"),
        ("30x", "is no expiry"),
        ("tomorrow", "is no expiry"),
        ("", "is no expiry"),
        ("99999999999999999w", "after the year 9999"),
    ):
        for command in (("add", "kim"), ("renew", "jo")):
            run = kaeru(vault, "token", *command, "--expires", value, KAERU_TIMEZONE="UTC")
            assert run.code == 2 and run.stdout == "", (value, run.stdout, run.stderr)
            assert "--expires" in run.stderr and said in run.stderr, (value, run.stderr)
    assert kaeru(vault, "token", "list", as_json=True).json() == before  # nothing made, nothing moved


def test_list_marks_an_expired_token(vault: VaultSpec) -> None:
    store = open_store(vault.settings())
    try:
        now = Service(store, vault.settings()).rt.now()
        then = Service(store, vault.settings(), clock=lambda: now - timedelta(days=30))
        grants.add_token(then.rt, "lee", None, False, "owner", now - timedelta(days=1))
        grants.add_token(then.rt, "max", None, False, "owner", now + timedelta(days=1))
    finally:
        store.close()
    ended = fmt(now - timedelta(days=1))[:16].replace("T", " ")
    listed = kaeru(vault, "token", "list", as_json=True).json()["tokens"]
    assert [(t["name"], t["expired"]) for t in listed] == [("lee", True), ("max", False)]
    lines = kaeru(vault, "token", "list", KAERU_TIMEZONE="UTC").stdout.splitlines()[1:]  # under the header
    assert lines[0].startswith("lee\t") and lines[0].endswith(f"\tEXPIRED {ended}")
    assert "EXPIRED" not in lines[1]


def test_a_token_may_not_be_named_as_the_actor_the_cli_and_admin_token_write_as(vault: VaultSpec) -> None:
    """Its writes and the owner's would be one name in history and the audit (decision 476 left it
    open): the local actor (KAERU_ACTOR, any case) and the default actor `agent` are refused."""
    for name, env in (
        ("agent", {}),
        ("Agent", {}),
        ("owner", {"KAERU_ACTOR": "owner"}),
        ("agent", {"KAERU_ACTOR": "owner"}),
    ):
        message = error_object(kaeru(vault, "token", "add", name, as_json=True, **env), "invalid_argument", 2)
        assert f"named {name!r}" in message and "indistinguishable" in message, message
    assert kaeru(vault, "token", "add", "agent-7").code == 0  # a name merely like it is another name
    assert [t["name"] for t in kaeru(vault, "token", "list", as_json=True).json()["tokens"]] == ["agent-7"]


def test_history_says_who_added_renewed_and_revoked_which_token_and_when(vault: VaultSpec) -> None:
    """Token records belong to no initiative, so `audit` never showed them: "who revoked bob, and
    when" had no answer but an export of the vault (a probe, session 53)."""
    made = {}
    for name, actor, extra in (("alice", "owner", ("--initiatives", "web,infra", "--read-only")), ("bob", "carol", ())):
        added = kaeru(vault, "token", "add", name, *extra, "--expires", "30d", KAERU_ACTOR=actor)
        assert added.code == 0, added.stderr
        made[name] = added.stdout.strip()
    renewed = kaeru(vault, "token", "renew", "alice", "--expires", "never", as_json=True, KAERU_ACTOR="carol")
    assert renewed.code == 0, renewed.stderr
    assert kaeru(vault, "token", "revoke", "bob", KAERU_ACTOR="owner").code == 0
    alice_ends = kaeru(vault, "token", "list", as_json=True).json()["tokens"][0]["expires_at"]
    assert alice_ends is None

    history = kaeru(vault, "token", "history", as_json=True)
    assert history.code == 0, history.stderr
    records = history.json()["history"]
    assert [(r["operation"], r["name"], r["actor"]) for r in records] == [
        ("revoked", "bob", "owner"),
        ("renewed", "alice", "carol"),
        ("added", "bob", "carol"),
        ("added", "alice", "owner"),
    ]
    assert records[3]["grant"]["initiatives"] == ["web", "infra"] and records[3]["grant"]["read_only"] is True
    assert records[2]["grant"]["initiatives"] is None and records[2]["grant"]["read_only"] is False
    assert records[0]["grant"] == records[2]["grant"]  # what bob had when revoked
    expiry = records[1]["expiry"]
    assert records[3]["grant"]["expires_at"] is not None
    assert expiry == {"before": records[3]["grant"]["expires_at"], "after": None}
    assert [r["at"] for r in records] == sorted((r["at"] for r in records), reverse=True)
    assert history.json()["more"] is False

    text = kaeru(vault, "token", "history", KAERU_TIMEZONE="UTC")
    lines = [line.split("\t") for line in text.stdout.splitlines()]
    assert [cols[1:4] for cols in lines] == [
        ["revoked", "bob", "by owner"],
        ["renewed", "alice", "by carol"],
        ["added", "bob", "by carol"],
        ["added", "alice", "by owner"],
    ]
    at = records[0]["at"]  # shown on the user's clock, to the minute
    assert lines[0][0] == f"{at[:10]} {at[11:16]}" and lines[0][4].startswith("had *; read-write; expires ")
    assert lines[1][4].startswith("expiry ") and lines[1][4].endswith(" → never")
    assert lines[3][4].startswith("web,infra; read-only; expires ")
    later = kaeru(vault, "token", "history", KAERU_TIMEZONE="Asia/Tokyo").stdout.splitlines()[0]
    assert later.split("\t")[0] != lines[0][0]  # nine hours on

    for name, expected in (("alice", ["renewed", "added"]), ("bob", ["revoked", "added"])):
        one = kaeru(vault, "token", "history", name, as_json=True).json()["history"]
        assert [(r["operation"], r["name"]) for r in one] == [(op, name) for op in expected]
        assert kaeru(vault, "token", "history", name).stdout.count(f"\t{name}\t") == 2
    assert kaeru(vault, "token", "history", "Alice", as_json=True).json()["history"] == []  # names are exact
    assert kaeru(vault, "token", "history", "zed").stdout.strip() == "no record of a token named 'zed'"

    newest = kaeru(vault, "token", "history", "--limit", "1", as_json=True).json()
    assert [r["name"] for r in newest["history"]] == ["bob"] and newest["more"] is True
    cut = kaeru(vault, "token", "history", "alice", "--limit", "1")
    assert len(cut.stdout.splitlines()) == 1 and "--limit" in cut.stderr

    # Another token whose name differs only in case (SQLite's LIKE does not tell them apart) is left out.
    assert kaeru(vault, "token", "add", "Alice", KAERU_ACTOR="owner").code == 0
    only = kaeru(vault, "token", "history", "alice", "--limit", "1", as_json=True).json()
    assert [(r["operation"], r["name"]) for r in only["history"]] == [("renewed", "alice")] and only["more"] is True

    everything = "".join(kaeru(vault, "token", "history", *n).stdout for n in ((), ("alice",), ("bob",)))
    everything += kaeru(vault, "token", "history", as_json=True).stdout
    assert all(secret not in everything for secret in made.values())
    assert "history" in kaeru(vault, "token", "list", "--help").stdout


def test_history_refuses_a_limit_past_its_bound_and_takes_the_bound(vault: VaultSpec) -> None:
    """`--limit 99999999999999999999` reached the database: a traceback (SQLite's OverflowError) or
    `internal` (PostgreSQL's NumericValueOutOfRange); a usage error now, naming the bound."""
    assert kaeru(vault, "token", "add", "alice").code == 0
    for huge in ("99999999999999999999", "10001"):
        refused = kaeru(vault, "token", "history", "--limit", huge)
        assert refused.code == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert "10000" in refused.stderr and "internal" not in refused.stderr
    most = kaeru(vault, "token", "history", "--limit", "10000", as_json=True)
    assert most.code == 0, most.stderr
    assert [r["name"] for r in most.json()["history"]] == ["alice"] and most.json()["more"] is False


def test_history_shows_a_damaged_record_as_stored(vault: VaultSpec) -> None:
    """A token record whose times are no text, or whose changes name no field (an archive's, imported
    before token records were skipped): the text output crashed on it (`TypeError`); now each record
    is a line, a value no time shown as stored."""
    from kaeru.storage.base import AuditRecord

    store = open_store(vault.settings())
    try:
        with store.write() as session:
            renewed = [{"field": "token", "before": "bob", "after": "bob"}, {"field": "expires_at", "before": 5}]
            session.append_audit(
                AuditRecord("2026-01-02T00:00:00.000000Z", "token_renew", "ann", None, None, [], renewed)
            )
            added = [{"field": ["token"]}, {"field": "grant", "after": {"expires_at": 7, "initiatives": "web"}}]
            session.append_audit(AuditRecord("2026-01-03T00:00:00.000000Z", "token_add", "ann", None, None, [], added))
    finally:
        store.close()
    text = kaeru(vault, "token", "history", KAERU_TIMEZONE="UTC")
    assert text.code == 0, text.stderr
    assert [line.split("\t") for line in text.stdout.splitlines()] == [
        ["2026-01-03 00:00", "added", "?", "by ann", '"web"; read-write; expires 7'],
        ["2026-01-02 00:00", "renewed", "bob", "by ann", "expiry 5 → never"],
    ]
    listed = kaeru(vault, "token", "history", as_json=True)
    assert listed.code == 0 and [r["name"] for r in listed.json()["history"]] == ["?", "bob"]
