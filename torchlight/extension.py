"""Module 0: how a later module extends an earlier module's class from its own file.

The course is built in layers: a file of module N never imports a file of a later module. Where a
later module adds to an earlier class (module 5's in-place tracking to module 1's ``History``,
module 3's fused operations to module 2's ``Tensor``), the later file registers its members:

    @extends(History)
    class _InplaceHistory:
        def _recorded_node(self, x): ...

``extends`` adds members, and replaces only the methods the earlier class marks as
``@extension_point``, so the class a student reads is the class that runs, plus what later files
add in plain sight. A module's own files use it too where one class would hold several concepts:
module 2's ``Tensor`` gets its comparisons, conversions and Variable protocol members from
``tensor_comparisons.py``, ``tensor_conversions.py`` and ``tensor_variable.py``.
"""

from typing import Any, Callable, Type, TypeVar

__all__ = ["extends", "extension_point"]

_F = TypeVar("_F", bound=Callable[..., Any])
_C = TypeVar("_C")


def extension_point(fn: _F) -> _F:
    """Mark a method as one that a later module may replace through ``extends``."""
    target = fn.__func__ if isinstance(fn, (staticmethod, classmethod)) else fn
    target._extension_point = True  # type: ignore[attr-defined]
    return fn


def _is_extension_point(member: Any) -> bool:
    target = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
    if isinstance(member, property):
        target = member.fget
    return bool(getattr(target, "_extension_point", False))


def extends(cls: type) -> Callable[[Type[_C]], Type[_C]]:
    """Class decorator: copy the decorated class's members onto ``cls``.

    A member that ``cls`` (or a base) already has may only replace an ``@extension_point``;
    anything else raises, so that no later file silently rewrites an earlier module's code.
    ``object``'s members (``__eq__``, ``__repr__``, ...) are Python's defaults, no module's code:
    a file may give a class its own.
    """

    def register(extension: Type[_C]) -> Type[_C]:
        for name, member in vars(extension).items():
            if name in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__annotations__"):
                continue
            existing = None
            for klass in cls.__mro__[:-1]:  # (the last is object)
                if name in vars(klass):
                    existing = vars(klass)[name]
                    break
            if existing is not None and not _is_extension_point(existing):
                raise TypeError(
                    f"{extension.__module__}.{extension.__qualname__} would replace {cls.__name__}.{name}, "
                    "which is not an extension point: give the new member another name"
                )
            setattr(cls, name, member)
        return extension

    return register
