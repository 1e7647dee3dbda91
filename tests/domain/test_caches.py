"""BoundedCache and the tokeniser's memos: bounded by the bytes they keep alive, not by entries."""

from __future__ import annotations

import random
import threading

import pytest

from kaeru.domain.caches import ENTRY_OVERHEAD, BoundedCache
from kaeru.domain.text import Tokeniser, stem, tokens


def _fixed(size: int) -> BoundedCache[str, str]:
    return BoundedCache(1000, lambda _k, _v: size)


def test_a_hit_returns_what_was_put_and_a_miss_none() -> None:
    cache = _fixed(100)
    assert cache.get("a") is None
    assert cache.put("a", "A") == "A"
    assert cache.get("a") == "A"
    assert "a" in cache and len(cache) == 1 and cache.bytes == 100


def test_the_oldest_entries_go_once_the_budget_is_passed() -> None:
    cache = _fixed(300)
    for key in "abcd":
        cache.put(key, key.upper())
    assert [k for k in "abcd" if k in cache] == ["b", "c", "d"]
    assert cache.bytes == 900 <= cache.max_bytes


def test_an_entry_over_the_per_entry_limit_is_returned_but_not_kept() -> None:
    cache: BoundedCache[str, str] = BoundedCache(1000, lambda k, _v: len(k), max_entry_bytes=10)
    cache.put("short", "kept")
    assert cache.put("x" * 11, "too large") == "too large"
    assert len(cache) == 1 and cache.bytes == 5


def test_putting_a_known_key_again_counts_it_once() -> None:
    cache = _fixed(100)
    cache.put("a", "A")
    cache.put("a", "A")
    assert cache.bytes == 100 and len(cache) == 1


def test_clear_forgets_everything() -> None:
    cache = _fixed(100)
    cache.put("a", "A")
    cache.clear()
    assert len(cache) == 0 and cache.bytes == 0 and cache.get("a") is None


def test_the_default_size_counts_key_value_and_entry() -> None:
    cache: BoundedCache[str, str] = BoundedCache(10_000)
    cache.put("key", "value")
    assert cache.bytes > ENTRY_OVERHEAD + len("key") + len("value")


def test_a_budget_must_be_positive() -> None:
    with pytest.raises(ValueError):
        BoundedCache(0)


def test_concurrent_writers_keep_the_byte_count_exact() -> None:
    cache: BoundedCache[int, int] = BoundedCache(50 * 10, lambda _k, _v: 10)

    def write(offset: int) -> None:
        for i in range(2000):
            cache.put(offset + i % 120, i)

    threads = [threading.Thread(target=write, args=(n * 1000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.bytes == 10 * len(cache) <= cache.max_bytes


def test_the_tokeniser_keeps_a_large_text_out_of_its_memo() -> None:
    """A text whose tokens would take more than the per-entry limit is tokenised, not kept."""
    tokeniser = Tokeniser(stream_bytes=1 << 20, stream_entry_bytes=64 << 10)
    large = "word " * 50_000
    small = "a few words"
    assert len(tokeniser.stream(large)) == 50_000
    assert tokeniser.stream(small) == ("a", "few", "words")
    assert large not in tokeniser.streams and small in tokeniser.streams
    assert tokeniser.streams.bytes <= 64 << 10


def test_a_text_tokenised_once_is_not_kept_but_a_kept_one_is_used() -> None:
    """A write's joined tags are tokenised once (`once`): the same tokens, nothing remembered; a
    text already remembered is answered from the memo either way (decision 14.C5)."""
    tokeniser = Tokeniser()
    tags = "kind:observation topic:deploy lang:en"
    assert tokeniser.stream(tags, once=True) == ("kind", "observation", "topic", "deploy", "lang", "en")
    assert tags not in tokeniser.streams and tokeniser.streams.bytes == 0
    body = "Deploy the API today"
    kept = tokeniser.stream(body)
    assert tokeniser.stream(body, once=True) is kept


def test_the_tokenisers_memos_stay_within_their_budgets() -> None:
    tokeniser = Tokeniser(stream_bytes=256 << 10, stem_bytes=64 << 10, fold_bytes=16 << 10)
    for i in range(3000):
        text = f"Réunion number{i} about running tests {i}"
        for token in tokeniser.stream(text):
            tokeniser.stem(token)
    assert 0 < tokeniser.streams.bytes <= 256 << 10
    assert 0 < tokeniser.stems.bytes <= 64 << 10
    assert 0 < tokeniser.folds.bytes <= 16 << 10


def test_memoised_answers_equal_fresh_ones() -> None:
    """The memo changes no answer: a fresh tokeniser and the process's one agree, twice over."""
    fresh = Tokeniser()
    text = "Ёлки-палки, the runners were RUNNING past café ﬁnance"
    expected = [stem(t) for t in tokens(text)]
    assert fresh.stem_all(fresh.stream(text)) == expected  # every word a miss
    for _ in range(2):
        assert list(fresh.stream(text)) == tokens(text)
        assert [fresh.stem(t) for t in fresh.stream(text)] == expected
        assert fresh.stem_all(fresh.stream(text)) == expected  # every word a hit
    assert fresh.stem_all([*fresh.stream(text), "unmemoised", "running"]) == [*expected, "unmemois", "run"]


def test_a_long_japanese_text_leaves_the_remembered_stems_in_place() -> None:
    """Every two-character piece of a Japanese or Chinese text is its own stem, and a long text has
    about as many distinct pieces as characters: remembering them would push the vault's working
    vocabulary out of the stem memo (decision 85). They are answered, not remembered."""
    tokeniser = Tokeniser(stem_bytes=64 << 10)
    vocabulary = tokeniser.stream("the runners were running past the deployments")
    tokeniser.stem_all(vocabulary)
    kept = set(vocabulary)
    rng = random.Random(3)
    text = "".join(chr(rng.randrange(0x4E00, 0x4E00 + 3000)) for _ in range(20_000))
    pieces = tokeniser.stream(text)
    assert tokeniser.stem_all(pieces) == list(pieces), "a piece is its own stem"
    assert all(word in tokeniser.stems for word in kept)
