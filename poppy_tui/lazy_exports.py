"""Package names loaded on first use (PEP 562), so importing a package costs only the parts a
caller reads: a short command's path stays free of what it never uses (docs/architecture.md)."""

from __future__ import annotations


def lazy_exports(package: str, where: dict[str, str], namespace: dict[str, object]):
    """The module `__getattr__` and `__dir__` of `package`: each name in `where` is read from the
    submodule it maps to on first use, then kept in the package's `namespace`."""

    def __getattr__(name: str) -> object:
        part = where.get(name)
        if part is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(f"{package}.{part}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__
