"""A recall query longer than recall reads (decision 412): a pasted page or log of megabytes was read
whole by the tokenisers and date patterns (tens of seconds of one core at 16 MB) and repeated whole
in the continuation. It is now cut at a word's end, the answer says so, and the continuation
carries the query that was read, which the next page accepts."""

from __future__ import annotations

import pytest

from kaeru.service import Service
from kaeru.service.recall.use_case import _cut_query
from kaeru.service.requests.reads import MAX_QUERY_CHARS
from tests.working.conftest import Call, make_call

P = "harbour"


@pytest.fixture
def call(service: Service) -> Call:
    return make_call(service)


def _fill(call: Call, count: int) -> None:
    for i in range(count):
        answer = call("note", initiative=P, text=f"the lighthouse keeper logged storm surge number {i}")
        assert answer["state"] == "applied", answer["issues"]


def test_a_query_longer_than_recall_reads_is_cut_at_a_word_and_said_so(call: Call) -> None:
    _fill(call, 14)
    words = " ".join(f"lighthouse storm{i}" for i in range(3 * MAX_QUERY_CHARS // 10))
    assert len(words) > 2 * MAX_QUERY_CHARS
    answer = call("recall", initiatives=[P], query=words, limit=5)
    assert answer["state"] == "ok", answer["issues"]
    cut = [i for i in answer["issues"] if i["field"] == "query" and "query cut" in i["message"]]
    assert len(cut) == 1, answer["issues"]
    assert answer["data"]["hits"], "the words it read still find the notes"
    following = answer["continuation"]["next_arguments"]
    read = following["query"]
    assert len(read) <= MAX_QUERY_CHARS and words.startswith(read) and words[len(read)] == " ", read[-40:]
    page = call("recall", **following)
    assert page["state"] == "ok", page["issues"]
    assert not any("query cut" in i["message"] for i in page["issues"]), page["issues"]
    first = {h["id"] for h in answer["data"]["hits"]}
    assert page["data"]["hits"] and first.isdisjoint(h["id"] for h in page["data"]["hits"])


def test_a_query_recall_reads_whole_is_not_cut(call: Call) -> None:
    _fill(call, 3)
    words = " ".join(f"lighthouse storm{i}" for i in range(MAX_QUERY_CHARS // 20))
    assert len(words) < MAX_QUERY_CHARS
    answer = call("recall", initiatives=[P], query=words, limit=2)
    assert answer["state"] == "ok", answer["issues"]
    assert not any("query cut" in i["message"] for i in answer["issues"]), answer["issues"]
    assert answer["continuation"]["next_arguments"]["query"] == words


def test_the_cut_keeps_a_word_that_ends_at_the_bound_and_knows_every_scripts_spaces() -> None:
    ends_at_bound = "a" * (MAX_QUERY_CHARS - 5) + " bcde z"
    assert _cut_query(ends_at_bound) == "a" * (MAX_QUERY_CHARS - 5) + " bcde"
    japanese = "日本語です\u3000" * MAX_QUERY_CHARS  # words between ideographic spaces
    cut = _cut_query(japanese)
    assert len(cut) <= MAX_QUERY_CHARS and cut.endswith("です") and japanese.startswith(cut + "\u3000")
    assert _cut_query("x" * (2 * MAX_QUERY_CHARS)) == "x" * MAX_QUERY_CHARS  # one word: cut at the bound
