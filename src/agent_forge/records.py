"""Records: classes of named fields, as `@dataclass` makes them, without importing `dataclasses` (issue 15).

`dataclasses` imports `inspect` (with `ast`, `dis`, `tokenize`) and compiles four or five functions for every
class it decorates: ~15 ms of an RPC spawn whose first `get_state` needs 18 such classes. A `Record` subclass
declares its fields as annotated class attributes (a default value, `factory(make)` for a fresh mutable one, or
none) and gets what the dataclasses here used: an `__init__` taking them (keywords only with `kw_only=True`),
`__eq__` between records of the same class, `__repr__`, `__match_args__`, and with `frozen=True` no assignment
after `__init__` and a `__hash__`. `replace(record, **changes)` and `as_dict(record)` stand for
`dataclasses.replace` and `dataclasses.asdict`.

    class Options(Record, kw_only=True):
        cwd: str
        tags: list[str] = factory(list)
"""

from __future__ import annotations

from typing import Any, Callable

_REQUIRED = object()
"""The default of a field without one (the caller must give it)."""


class factory:  # noqa: N801 - a field marker, written as dataclasses' `field(default_factory=...)` would be
    """A field default made anew for each record: `make()` (`list`, `dict`, a class)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class FrozenRecordError(AttributeError):
    """Assignment to a field of a frozen record."""


class Record:
    """Base of the records (see the module doc). Class keywords: `kw_only` (default False), `frozen` (default
    False). Raises TypeError, as a dataclass's `__init__` does, for a missing, unknown or repeated field."""

    _fields: tuple[str, ...] = ()
    _defaults: dict[str, Any] = {}
    _kw_only = False

    def __init_subclass__(cls, *, kw_only: bool = False, frozen: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields, defaults = list(cls._fields), dict(cls._defaults)
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if "ClassVar" in str(annotation):
                continue
            if name not in fields:
                fields.append(name)
            defaults[name] = cls.__dict__.get(name, _REQUIRED)
            if isinstance(defaults[name], factory):
                delattr(cls, name)  # as dataclasses does: the class holds no shared mutable default
        cls._fields, cls._defaults, cls._kw_only = tuple(fields), defaults, kw_only
        cls.__match_args__ = () if kw_only else cls._fields
        if frozen:  # set on frozen classes only: a mutable record's assignments stay at C speed
            cls.__setattr__, cls.__delattr__ = _frozen_setattr, _frozen_delattr  # type: ignore[assignment]
            cls.__hash__ = Record._frozen_hash  # type: ignore[method-assign]
        elif "__hash__" not in cls.__dict__:
            cls.__hash__ = None  # type: ignore[assignment]  # equal by value and mutable: not hashable

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            kwargs = self._with_positional(args, kwargs)
        unknown = kwargs.keys() - self._defaults.keys()
        if unknown:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"{sorted(unknown)[0]!r}")
        put = object.__setattr__
        for name, default in self._defaults.items():
            if name in kwargs:
                put(self, name, kwargs[name])
            elif type(default) is factory:
                put(self, name, default.make())
            elif default is _REQUIRED:
                raise TypeError(f"{type(self).__name__}.__init__() missing required argument: {name!r}")
            else:
                put(self, name, default)

    def _with_positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        name = type(self).__name__
        if self._kw_only or len(args) > len(self._fields):
            raise TypeError(f"{name}.__init__() takes {0 if self._kw_only else len(self._fields)} positional "
                            f"arguments but {len(args)} were given")
        for field, value in zip(self._fields, args):
            if field in kwargs:
                raise TypeError(f"{name}.__init__() got multiple values for argument {field!r}")
            kwargs[field] = value
        return kwargs

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"

    def _frozen_hash(self) -> int:
        return hash(self._values())


def _frozen_setattr(self: Record, name: str, value: Any) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Record, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r}")


def replace(record: Any, **changes: Any) -> Any:
    """A new record of `record`'s class with its fields, `changes` (field name → value) replacing some.
    Raises TypeError for a name that is not a field."""
    values = {name: getattr(record, name) for name in record._fields}
    return type(record)(**{**values, **changes})


def as_dict(record: Any) -> dict[str, Any]:
    """`record`'s fields as a dict (field name → value), records among the values (also inside lists, tuples
    and dicts) made dicts too; other values are not copied."""
    return {name: _plain(getattr(record, name)) for name in record._fields}


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return as_dict(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(item) for item in value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value
