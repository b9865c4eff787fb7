"""Adapter classes built on a framework's base class when first imported, so importing an
adapter module never imports its framework: ``__getattr__ = module_getattr(__name__, {...})``."""
from __future__ import annotations

from collections.abc import Callable


def module_getattr(module: str, builders: dict[str, Callable[[], type]]) -> Callable[[str], type]:
    """A module ``__getattr__`` that returns ``builders[name]()`` (each builder caches its
    class). The first access builds every class of the module (one framework, imported
    once) and gives each its name as its qualified name, so that repr and pickle find it
    (a result class included, before anyone imports it by name)."""
    def __getattr__(name: str) -> type:
        if name not in builders:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        for key, build in builders.items():
            build().__qualname__ = key
        return builders[name]()
    return __getattr__
