"""Component settings: what a component may be told in the config, declared on the component.

A component class (or factory function) lists its settings::

    class AlignScoreFaithfulness:
        settings = (Setting("checkpoint", str, None, "AlignScore .ckpt file", required=True),
                    Setting("base_model", str, None, "local roberta-base/-large directory", required=True))

and a config gives them in a table per component, named ``<home>.<component>``: under the
kind's section for faithfulness backends and decomposers (``[faithfulness.alignscore]``;
the llm decomposer's own keys stay the ``[decomposer]`` section's), else in a top-level
table named by the kind (``[equivalence.nli]``, ``[scorers.<name>]``; an application's
kinds too, e.g. ``[fallbacks.model]``: they are declared through the ``franq.kinds``
entry point group, see :mod:`franq.registry`)::

    [faithfulness.alignscore]
    checkpoint = "/models/AlignScore-large.ckpt"
    base_model = "/models/roberta-large"

Every table is checked against its component's declaration when the config is built,
before any model loads (an unknown key or a wrong type is an :class:`InputError` naming
the key); a ``required`` setting is checked for the components the config chooses. A
component reads its resolved values (defaults filled in) with
``config.settings_for(kind, name)``. Plugins declare and read settings the same way.

A component whose settings usually equal another's of its kind may name it,
``settings_from = "chat_p_true"``: a setting its own table leaves unset is then read from
that component's table (:func:`table_of`), so one model's address is written once.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from franq.errors import InputError

TABLE_HOME = {"faithfulness": "faithfulness", "decomposers": "decomposer"}
"""Kinds whose tables live under a config section; every other kind's under a top-level table of its name."""


@dataclass(frozen=True)
class Setting:
    """One setting a component accepts: its key, type (``str``, ``int``, ``float`` or
    ``bool``), default (``None``: unset) and a line of help. ``required``: the component
    cannot run without it (checked when the config chooses the component)."""

    name: str
    type: type
    default: Any = None
    help: str = ""
    required: bool = False

    def check(self, value: Any, where: str) -> None:
        """An :class:`InputError` naming ``where`` unless ``value`` has this setting's type."""
        if value is None:
            return
        ok = isinstance(value, self.type) and (self.type is bool or not isinstance(value, bool))
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            wanted = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(
                self.type, self.type.__name__)
            raise InputError(f"config '{where}': expected {wanted}, got {type(value).__name__} {value!r}")
        if self.type is float and not math.isfinite(value):
            raise InputError(f"config '{where}': expected a finite number, got {value!r}")
        if isinstance(value, str) and not value.strip():
            raise InputError(f"config '{where}': is an empty string; leave it out for the default")


def declared(component) -> tuple[Setting, ...]:
    """The settings ``component`` (a class or factory function) declares; none by default."""
    out = tuple(getattr(component, "settings", ()) or ())
    bad = [s for s in out if not isinstance(s, Setting)]
    if bad:
        raise InputError(f"{getattr(component, '__name__', component)!r}: 'settings' must be Setting(...) "
                         f"declarations, got {bad[0]!r}")
    return out


def resolve(component, table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``table`` checked against ``component``'s declaration, with defaults filled in."""
    known = {s.name: s for s in declared(component)}
    for key in table:
        if key not in known:
            raise InputError(f"config '{where}.{key}': unknown setting; known: {sorted(known)}")
    for key, value in table.items():
        known[key].check(value, f"{where}.{key}")
    return {name: table.get(name, s.default) for name, s in known.items()}


def table_of(components, kind: str, name: str, component) -> dict[str, Any]:
    """The values the config gives ``name`` of ``kind``: its own table, over the table of the
    component its declaration names in ``settings_from`` (keys that one declares too)."""
    own = dict(components.get(kind, name))
    base = getattr(component, "settings_from", None)
    if not base:
        return own
    known = {s.name for s in declared(component)}
    return {**{k: v for k, v in components.get(kind, base).items() if k in known}, **own}


def where(kind: str, name: str) -> str:
    """The dotted config key of ``name``'s table (``faithfulness.alignscore``)."""
    return f"{TABLE_HOME.get(kind, kind)}.{name}"


def top_kinds() -> list[str]:
    """The component kinds whose tables are top-level (``[equivalence.nli]``)."""
    from franq import registry

    return [k for k in registry.kinds() if k not in TABLE_HOME]


def split_tables(data: dict[str, Any], sections: Mapping[str, type], source: str) -> tuple[dict[str, Any], dict]:
    """``data`` (a config's nested dict) without its component tables, and those tables by
    ``(kind, name)``; ``sections``: the config's section classes."""
    homes = {TABLE_HOME.get(kind, kind): kind for kind in (*TABLE_HOME, *top_kinds())}
    rest, tables = dict(data), {}
    for home, kind in homes.items():
        if not isinstance(data.get(home), dict):
            continue
        if home in sections:
            fields = {f.name for f in dataclasses.fields(sections[home])}
            names = [k for k, v in data[home].items() if k not in fields and isinstance(v, dict)]
            rest[home] = {k: v for k, v in data[home].items() if k not in names}
        else:
            names = list(rest.pop(home))
            for name in names:
                if not isinstance(data[home][name], dict):
                    raise InputError(f"{source}: '{home}.{name}': expected a table of settings, "
                                     f"got {type(data[home][name]).__name__}")
        tables.update({(kind, name): data[home][name] for name in names})
    return rest, tables


@dataclass(frozen=True)
class ComponentTables:
    """The component tables of a config, as given (defaults not filled in), hashable and
    frozen like the rest of :class:`~franq.config.FranqConfig`."""

    tables: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...] = ()

    @classmethod
    def of(cls, tables: Mapping[tuple[str, str], Mapping[str, Any]]) -> ComponentTables:
        return cls(tuple(sorted((kind, name, tuple(sorted(t.items()))) for (kind, name), t in tables.items())))

    def get(self, kind: str, name: str) -> Mapping[str, Any]:
        for k, n, items in self.tables:
            if (k, n) == (kind, name):
                return MappingProxyType(dict(items))
        return MappingProxyType({})

    def __iter__(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        return iter((k, n, dict(items)) for k, n, items in self.tables)

    def __len__(self) -> int:
        return len(self.tables)


def check_tables(config, chosen: Mapping[tuple[str, str], str]) -> None:
    """Every table of ``config`` names a known component of a known kind and holds only its
    settings, of their types; ``chosen`` (``(kind, name) -> the key that chose it``): those
    components' required settings are set and their ``check_settings`` hook passes."""
    from franq import registry

    for kind, name, table in config.components:
        key = where(kind, name)
        if kind not in registry.kinds():
            raise InputError(f"config '{key}': unknown component kind {kind!r}; known: {list(registry.kinds())}")
        resolve(_lookup(registry, kind, name, key), table, key)
    for (kind, name), chooser in chosen.items():
        component = _lookup(registry, kind, name, chooser)
        values = resolve(component, table_of(config.components, kind, name, component), where(kind, name))
        for s in declared(component):
            if s.required and values[s.name] is None:
                base = getattr(component, "settings_from", None)
                also = f" (or in '{where(kind, base)}', which it reads where its own table is silent)" if base else ""
                raise InputError(f"config '{where(kind, name)}.{s.name}': required when {chooser} is {name!r}{also}")
        hook = getattr(component, "check_settings", None)
        if hook is not None:
            hook(values, config)


def _lookup(registry, kind: str, name: str, key: str):
    try:
        return registry.lookup(kind, name)
    except InputError as exc:
        raise InputError(f"config '{key}': {exc}") from None
