"""`words`: counted nouns and lists as users and models read them."""

from __future__ import annotations

import pytest

from agent_forge.words import counted, listed


@pytest.mark.parametrize("count, expected", [(0, "0 session entries"), (1, "1 session entry"),
                                             (2, "2 session entries"), (1204, "1204 session entries")])
def test_a_count_of_one_takes_the_singular(count, expected):
    assert counted(count, "session entry", "session entries") == expected


def test_the_plural_defaults_to_an_s_and_numbers_may_be_grouped():
    assert (counted(1, "line"), counted(3, "line"), counted(1204, "line", grouped=True)) == (
        "1 line", "3 lines", "1,204 lines")


@pytest.mark.parametrize("items, expected", [(["a"], "a"), (["a", "b"], "a and b"), (["a", "b", "c"], "a, b and c")])
def test_lists_join_with_commas_and_a_last_and(items, expected):
    assert listed(items) == expected
