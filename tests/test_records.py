"""agent_forge.records: the dataclass behaviour the records of the start-up path rely on."""

from __future__ import annotations

import copy
import pickle

import pytest

from agent_forge.records import FrozenRecordError, Record, as_dict, factory, replace


class Point(Record):
    x: int
    y: int = 0
    tags: list[str] = factory(list)


class Options(Record, kw_only=True):
    cwd: str
    point: Point | None = None


class Key(Record, frozen=True):
    name: str
    size: int = 1


def test_fields_are_taken_by_position_and_keyword_with_defaults_and_fresh_factories():
    first, second = Point(1), Point(2, y=3)
    assert (first.x, first.y, first.tags) == (1, 0, [])
    assert (second.x, second.y) == (2, 3)
    first.tags.append("a")
    assert second.tags == [] and "tags" not in Point.__dict__  # a mutable default is made per record
    assert vars(first) == {"x": 1, "y": 0, "tags": ["a"]}


@pytest.mark.parametrize("make, words", [
    (lambda: Point(), "missing required argument: 'x'"),
    (lambda: Point(1, 2, [], 4), "takes 3 positional arguments but 4 were given"),
    (lambda: Point(1, x=2), "multiple values for argument 'x'"),
    (lambda: Point(1, z=2), "unexpected keyword argument 'z'"),
    (lambda: Options("/tmp"), "takes 0 positional arguments but 1 were given"),
])
def test_wrong_arguments_raise_type_error_as_a_dataclass_does(make, words):
    with pytest.raises(TypeError, match=words.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_equality_repr_and_hashing_follow_dataclasses():
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(1, 3)
    assert Point(1) != Options(cwd="/")  # another class is never equal
    assert repr(Point(1, tags=["t"])) == "Point(x=1, y=0, tags=['t'])"
    with pytest.raises(TypeError):
        hash(Point(1))  # mutable and compared by value
    assert hash(Key("a")) == hash(Key("a")) and {Key("a"), Key("a", 2)} == {Key("a", 1), Key("a", 2)}
    assert Point.__match_args__ == ("x", "y", "tags") and Options.__match_args__ == ()


def test_a_frozen_record_refuses_assignment_after_init():
    key = Key("a")
    with pytest.raises(FrozenRecordError):
        key.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del key.size
    assert key.name == "a"


def test_replace_as_dict_copy_and_pickle():
    options = Options(cwd="/w", point=Point(1, tags=["t"]))
    moved = replace(options, cwd="/x")
    assert moved == Options(cwd="/x", point=options.point) and options.cwd == "/w"
    with pytest.raises(TypeError):
        replace(options, nope=1)
    assert as_dict(options) == {"cwd": "/w", "point": {"x": 1, "y": 0, "tags": ["t"]}}
    assert replace(Key("a"), size=5) == Key("a", 5)
    for clone in (copy.deepcopy(options), pickle.loads(pickle.dumps(Key("k", 3)))):
        assert clone == (options if isinstance(clone, Options) else Key("k", 3))
