"""A PostgreSQL URL with its secrets left out (decision 179) is, as libpq reads it, the same URL
without them: the client's server connects to the same place with the same options."""

from __future__ import annotations

import pytest

from kaeru.config import url_password_replaced

conninfo = pytest.importorskip("psycopg.conninfo", reason="libpq's own reading comes with the [postgres] extra")

URLS = [
    "postgresql://kaeru:s3cret@127.0.0.1:5432/team",
    "postgresql://kaeru:p%40ss%2Bword@[::1]:5433/team?sslmode=require",
    "postgresql://kaeru@db.example/team?password=s3cret&application_name=kaeru+memory",
    "postgresql://kaeru:one@db/team?options=-c%20search_path%3Dmemory&password=two",
    "postgresql://kaeru@/team?host=/var/run/my%20sockets&password=xyzzy&sslpassword=key-pass&sslkey=/k.pem",
    "postgres://h1:5432,h2:5433/team?target_session_attrs=read-write",
    # A password libpq takes with a raw `?` or `#` in it (found in review: it was left in, or cut).
    "postgresql://kaeru:pa?ss@db/team",
    "postgresql://kaeru:pa#ss@db/team?sslmode=require",
    "postgresql://kaeru@db",
]


@pytest.mark.parametrize("url", URLS)
def test_the_url_without_its_secrets_is_the_same_connection_to_libpq(url: str) -> None:
    before = conninfo.conninfo_to_dict(url)
    after = conninfo.conninfo_to_dict(url_password_replaced(url, None))
    secrets = {"password", "sslpassword"}
    assert after == {k: v for k, v in before.items() if k not in secrets}
    shown = url_password_replaced(url, "***")
    assert {k: v for k, v in conninfo.conninfo_to_dict(shown).items() if k not in secrets} == after
    for key in secrets & set(before):
        assert str(before[key]) not in shown
