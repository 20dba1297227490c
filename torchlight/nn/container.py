"""Module 4: Sequential, the container that chains layers: ``Sequential(Conv2d(...), ReLU(), ...)``.

Its children are named "0", "1", ... in order, as PyTorch names them, so a model's parameter names
(``"0.weight"``) and its ``state_dict`` keys are those of the same ``torch.nn.Sequential``.
"""

from collections import OrderedDict
from typing import Any, Iterator, Union, overload

from .module import Module

__all__ = ["Sequential"]


class Sequential(Module):
    """Modules applied one after another: ``forward(x)`` is ``m_n(...m_1(m_0(x)))``.

    ``Sequential(m0, m1, ...)`` names them "0", "1", ...; ``Sequential(OrderedDict(name=module))``
    gives them names. Indexing (``model[0]``, ``model[-1]``, ``model[1:]``), ``len`` and iteration
    work as on a list of the modules.
    """

    def __init__(self, *args: Any):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            items = list(args[0].items())
        else:
            items = [(str(i), m) for i, m in enumerate(args)]
        for name, module in items:
            self._check_module(module, name)
            self.add_module(name, module)

    @staticmethod
    def _check_module(module: Any, where: Any) -> None:
        if not isinstance(module, Module):
            raise TypeError(
                f"Sequential: element {where} is {type(module).__name__}, not a Module "
                "(write Sequential(Linear(2, 3), ReLU()), not a list or a function)"
            )

    def _index(self, idx: Any) -> int:
        """idx as a position in 0..len-1 (negative counts from the end); IndexError if out of range."""
        if isinstance(idx, bool) or not hasattr(idx, "__index__"):
            raise TypeError(f"Sequential indices must be integers or slices, not {type(idx).__name__}")
        n = len(self)
        i = idx.__index__()
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for a Sequential of {n} modules")
        return i % n

    @overload
    def __getitem__(self, idx: slice) -> "Sequential": ...

    @overload
    def __getitem__(self, idx: int) -> Module: ...

    def __getitem__(self, idx: Union[int, slice]) -> Union[Module, "Sequential"]:
        """The module at position idx, or for a slice a Sequential of those modules (same names)."""
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        return items[self._index(idx)][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        """Replace the module at position idx (keeping its name)."""
        self._check_module(module, idx)
        name = list(self._modules)[self._index(idx)]
        self._modules[name] = module

    def __delitem__(self, idx: Union[int, slice]) -> None:
        """Remove the module(s) at idx; the rest are renumbered "0", "1", ... as PyTorch does."""
        names = list(self._modules)
        doomed = names[idx] if isinstance(idx, slice) else [names[self._index(idx)]]
        for name in doomed:
            del self._modules[name]
        kept = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(kept):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        """Add module at the end (named by its position); returns self."""
        self._check_module(module, len(self))
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input: Any) -> Any:
        """input through every module in order."""
        for module in self:
            input = module(input)
        return input
