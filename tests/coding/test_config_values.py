"""The shared checks for configuration numbers (coding/config_values.py)."""

from __future__ import annotations

import math

import pytest

from agent_forge.coding.config_values import (MAX_SAFE_INTEGER, drop_out_of_range, is_count, is_fraction,
                                              is_number, is_positive_int)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 10 ** 400, MAX_SAFE_INTEGER + 1, 1e300, True,
                                   "1", None])
def test_numbers_that_would_overflow_or_are_not_numbers_are_refused(value):
    assert not is_number(value) and not is_count(value) and not is_positive_int(value)


def test_counts_integers_and_fractions():
    assert is_count(0) and is_count(3.0) and not is_count(-1) and not is_count(1.5)
    assert is_positive_int(MAX_SAFE_INTEGER) and not is_positive_int(0) and not is_positive_int(1.5)
    assert is_fraction(0.5) and not is_fraction(0) and not is_fraction(1) and not is_fraction(7)


def test_drop_removes_the_key_and_a_list_holding_a_bad_number():
    data = {"a": 1, "b": {"c": math.inf, "d": 2}, "e": [1, math.nan], "f": [{"g": 10 ** 20, "h": 1}]}
    assert drop_out_of_range(data) == [("b", "c"), ("e", 1), ("f", 0, "g")]
    assert data == {"a": 1, "b": {"d": 2}, "f": [{"h": 1}]}
