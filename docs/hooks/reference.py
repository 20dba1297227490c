"""The API reference pages: one per public module of the contract (shared/spec/CONTRACT.md).

Each page is one mkdocstrings directive for the module, listing its public functions and classes
(``__all__``, or the public names defined in a module without one). An object that several
modules export (``torchlight.no_grad`` is ``torchlight.autograd.no_grad``) is documented once, on
the page of the module it is defined in (the longest page name that prefixes its ``__module__``),
or on the first page that exports it when that module does not; the other pages link to it.
"""

import importlib
import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Dict, List, Tuple

# (module, what a reader finds there), in the order of the course.
REFERENCE: List[Tuple[str, str]] = [
    ("torchlight", "PyTorch's top-level names: factories, functional operations, dtypes, Scalar, seeds"),
    ("torchlight.scalar", "module 0: the float operators and list helpers that backends lift to tensors"),
    ("torchlight.autograd", "modules 1 and 5: the engine, Function and Context, gradients and checks"),
    ("torchlight.autograd.forward_ad", "module 5: forward-mode AD with dual tensors"),
    ("torchlight.autograd.functional", "module 5: jvp, vjp and Hessian-vector products"),
    ("torchlight.tensor", "module 2: the Tensor class and its factories"),
    ("torchlight.tensor_data", "module 2: storage, shapes, strides and broadcasting"),
    ("torchlight.backends", "modules 2 and 3: the simple, fast and cuda backends"),
    ("torchlight.nn", "modules 0 and 4: Module, Parameter, layers and losses"),
    ("torchlight.nn.functional", "module 4: the functional forms of layers and losses"),
    ("torchlight.optim", "modules 2 and 4: SGD, Adam and the Optimizer base"),
    ("torchlight.datasets", "modules 0 and 4: toy 2-D sets, Digits, MNIST"),
    ("torchlight.utils.data", "module 4: Dataset, TensorDataset, DataLoader"),
    ("torchlight.serialization", "saving and loading state dicts"),
    ("torchlight.grading", "grading a stage, the whole course, Gradescope's format"),
    ("torchlight.course", "for instructors: the student edition and its checks"),
]


@dataclass
class Page:
    """One reference page: its module, blurb, the names it documents and those it links to."""

    module: str
    blurb: str
    members: List[str]
    elsewhere: Dict[str, str]  # name -> where it is documented: "torchlight.autograd.no_grad"

    @property
    def src_uri(self) -> str:
        """Where the page lies in the site: ``reference/torchlight.nn.md``."""
        return f"reference/{self.module}.md"

    def markdown(self) -> str:
        """The page: a title, the blurb, the module's docstring and members, and links for the rest."""
        lines = [f"# `{self.module}`", "", f"*{self.blurb[0].upper()}{self.blurb[1:]}.*", ""]
        lines += [f"::: {self.module}", "    options:", "      show_root_heading: false"]
        if self.members:
            lines.append("      members:")
            lines += [f"        - {name}" for name in self.members]
        else:
            lines.append("      members: false")
        if self.elsewhere:
            lines += ["", "## Documented on another page", ""]
            for name, target in sorted(self.elsewhere.items()):
                page = target.rsplit(".", 1)[0]
                lines.append(f"- `{self.module}.{name}`: see [`{target}`]({page}.md#{target})")
        return "\n".join(lines) + "\n"


def public_names(module: ModuleType) -> List[str]:
    """The functions and classes a module offers: its ``__all__``, or the public names defined in it."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items() if getattr(obj, "__module__", None) == module.__name__]
    return [n for n in names if not n.startswith("_") and _documentable(getattr(module, n, None))]


def _documentable(obj: object) -> bool:
    # Submodules have their own pages; constants and dtype objects carry no docstring of their own.
    return inspect.isclass(obj) or inspect.isroutine(obj)


def pages() -> List[Page]:
    """Every reference page, each object placed on exactly one."""
    modules = {name: importlib.import_module(name) for name, _ in REFERENCE}
    exported: Dict[str, List[Tuple[str, object]]] = {
        name: [(n, getattr(m, n)) for n in public_names(m)] for name, m in modules.items()
    }
    home: Dict[int, Tuple[str, str]] = {}  # id(object) -> (page, the name it has there)
    for page, _ in REFERENCE:
        for name, obj in exported[page]:
            if id(obj) in home:
                continue
            owner = _owner(getattr(obj, "__module__", "") or "", [p for p, _ in REFERENCE])
            there = [n for n, o in exported[owner] if o is obj] if owner is not None else []
            home[id(obj)] = (owner, there[0]) if owner is not None and there else (page, name)
    result = []
    for page, blurb in REFERENCE:
        members = [n for n, obj in exported[page] if home[id(obj)][0] == page]
        elsewhere = {n: ".".join(home[id(obj)]) for n, obj in exported[page] if home[id(obj)][0] != page}
        result.append(Page(page, blurb, members, elsewhere))
    return result


def _owner(defined_in: str, names: List[str]) -> "str | None":
    """The page whose module is the longest dotted prefix of ``defined_in``."""
    best = None
    for name in names:
        if (defined_in == name or defined_in.startswith(name + ".")) and (best is None or len(name) > len(best)):
            best = name
    return best


def index_markdown(every: List[Page]) -> str:
    """The reference's front page: one line per module."""
    lines = [
        "# API reference",
        "",
        "Generated from the docstrings at every build, so it is the library as it is. torchlight follows",
        "PyTorch's names and semantics: where a name exists in PyTorch, it means what it means there",
        "(the differences are in the guides).",
        "",
        "| module | what it holds |",
        "|---|---|",
    ]
    for page in every:
        lines.append(f"| [`{page.module}`]({page.module}.md) | {page.blurb} |")
    return "\n".join(lines) + "\n"
