"""One way to read a config from a dict (a saved config.json, a notebook's overrides): strict.

    cfg = strict_from_dict(GameConfig, {"seed": 3, "n_items": 3})

Unknown keys, and values whose type differs from the field's default (a bool where a number
belongs, a float where an integer belongs, a string for a number), raise `ConfigError` naming
the field and the fix; numbers for float fields become floats. Range checks stay with each
config (`__post_init__`), since only it knows its ranges. Used by `GameConfig`, `MemoryConfig`
and `EvalConfig`. `overridden` reads a command line's JSON overrides (`--memory`, `--loop`) the
same way, exiting with the flag named.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any, TypeVar

from mags_lib.errors import ConfigError

T = TypeVar("T")


def field_defaults(cls: type) -> dict[str, Any]:
    """Each field's default value (factories called), by name."""
    out = {}
    for f in fields(cls):
        if f.default is not MISSING:
            out[f.name] = f.default
        elif f.default_factory is not MISSING:
            out[f.name] = f.default_factory()
    return out


def check_value(owner: str, name: str, value: Any, default: Any) -> Any:
    """`value` checked against the type of `default` (and coerced: int -> float for floats).

    >>> check_value("GameConfig", "drift_rate", 0, 0.0)
    0.0
    >>> check_value("GameConfig", "n_items", 2.0, 2)
    Traceback (most recent call last):
    ...
    mags_lib.errors.ConfigError: GameConfig.n_items = 2.0 is a float
      fix: set n_items to an integer like 2
    """
    if isinstance(default, bool):
        ok, want = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, want = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif isinstance(default, float):
        ok, want = isinstance(value, int | float) and not isinstance(value, bool), "a number"
        value = float(value) if ok else value
    elif isinstance(default, str):
        ok, want = isinstance(value, str), "a string"
    elif isinstance(default, dict):
        ok, want = isinstance(value, dict), "an object (a dict)"
        numeric = default and all(isinstance(v, int | float) and not isinstance(v, bool)
                                  for v in default.values())
        if ok and numeric:
            value = {str(k): check_value(owner, f"{name}.{k}", v, 1.0) for k, v in value.items()}
    else:
        return value  # None, lists, nested configs: the config's own __post_init__ decides
    if not ok:
        raise ConfigError(f"{owner}.{name} = {value!r} is a {type(value).__name__}",
                          f"set {name} to {want} like {default!r}")
    return value


def strict_from_dict(cls: type[T], data: Any) -> T:
    """`cls(**data)` after checking the keys and value types against `cls`'s defaults."""
    owner = cls.__name__
    if not isinstance(data, dict):
        raise ConfigError(f"{owner} must be read from an object (a dict), got "
                          f"{type(data).__name__}", f"pass a dict of {owner} fields")
    defaults = field_defaults(cls)
    unknown = sorted(set(data) - {f.name for f in fields(cls)})
    if unknown:
        raise ConfigError(f"unknown {owner} keys {unknown}",
                          f"use only these keys: {sorted(defaults)}")
    kwargs = {name: check_value(owner, name, value, defaults.get(name))
              for name, value in data.items()}
    return cls(**kwargs)


def overridden(base: dict, flag: str, text: str, check: Callable[[dict], Any],
               fields: str) -> dict:
    """`base` updated with the JSON object `text` (the value of the command-line `flag`),
    checked by `check` before any model loads; a clear exit naming the flag and `fields` (what
    the object may hold) otherwise.

    >>> overridden({"a": 1}, "--x", '{"b": 2}', lambda d: None, "fields")
    {'a': 1, 'b': 2}
    """
    import sys

    from mags_lib.errors import MagsError

    try:
        extra = json.loads(text)
        if not isinstance(extra, dict):
            raise ValueError("not a JSON object")
        out = {**base, **extra}
        check(out)  # refuse an unknown or ill-typed setting up front
    except (ValueError, TypeError, MagsError) as exc:
        sys.exit(f"error: {flag} {text!r}: {exc}; pass a JSON object of {fields}")
    return out
