"""The API reference pages: one per public module (shared/spec/CONTRACT.md, and every package).

Each page is one mkdocstrings directive for the module, listing its public functions and classes
(``__all__``, or the public names defined in a module without one). An object that several
modules export (``torchlight.no_grad`` is ``torchlight.autograd.no_grad``) is documented once, on
the page of the module it is defined in (the longest page name that prefixes its ``__module__``),
or on the first page that exports it when that module does not; the other pages link to it.

Every other public name has its place too, so that nothing goes missing silently
(tests/test_api_reference.py checks it, and tests/site/check_site.py that each one is rendered):

- a submodule in ``__all__`` (``torchlight.nn.functional``) links to its own page, which must exist;
- a constant (the dtypes, ``datasets.TOY``) is a row of the page's table of constants;
- a function or class that a submodule of the same name hides from mkdocstrings's static analysis
  (``autograd.once_differentiable`` is also the module ``autograd/once_differentiable.py``) is
  documented from the module that defines it, under an anchor with its public name;
- a function or class made at run time (``cos = _unary("cos")``, a namedtuple), which static
  analysis sees as an attribute without a docstring, is written from the object itself: its
  signature and docstring.
"""

import importlib
import importlib.util
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, List, Tuple

from docstrings import fields_as_tables, plain  # beside this file (the hooks' folder is on sys.path)

# (module, what a reader finds there), in the order of the course.
REFERENCE: List[Tuple[str, str]] = [
    ("torchlight", "PyTorch's top-level names: factories, functional operations, dtypes, Scalar, seeds"),
    ("torchlight.scalar", "module 0: the float operators and list helpers that backends lift to tensors"),
    ("torchlight.autograd", "modules 1 and 5: the engine, Function and Context, gradients and checks"),
    ("torchlight.autograd.forward_ad", "module 5: forward-mode AD with dual tensors"),
    ("torchlight.autograd.functional", "module 5: jvp, vjp and Hessian-vector products"),
    ("torchlight.draw", "modules 1 and 2: a picture of a computation graph"),
    ("torchlight.tensor", "module 2: the Tensor class and its factories"),
    ("torchlight.tensor_data", "module 2: storage, shapes, strides and broadcasting"),
    ("torchlight.ops", "modules 2 to 5: the Functions behind the tensor operations, each with its derivatives"),
    ("torchlight.backends", "modules 2 and 3: the simple, fast and cuda backends"),
    ("torchlight.backends.mps", "module 2: PyTorch's torch.backends.mps questions, answered (no Apple GPU here)"),
    ("torchlight.cuda", "module 3: is there a GPU for the cuda backend"),
    ("torchlight.accelerator", "module 3: PyTorch's device-neutral questions, answered for the cuda backend"),
    ("torchlight.nn", "modules 0 and 4: Module, Parameter, layers and losses"),
    ("torchlight.nn.functional", "module 4: the functional forms of layers and losses"),
    ("torchlight.optim", "modules 2 and 4: SGD, Adam and the Optimizer base"),
    ("torchlight.datasets", "modules 0 and 4: toy 2-D sets, Digits, MNIST"),
    ("torchlight.utils", "module 4: utilities around training"),
    ("torchlight.utils.data", "module 4: Dataset, TensorDataset, DataLoader"),
    ("torchlight.utils.cli", "the command lines' argument parser: --help, one-line errors"),
    ("torchlight.examples", "module 4: the demo CNN, runnable from an installed package"),
    ("torchlight.compat", "PyTorch programs and tutorials unchanged: a torch and torchvision that are torchlight"),
    ("torchlight.serialization", "saving and loading state dicts"),
    ("torchlight.grading", "grading a stage, the whole course, Gradescope's format"),
    ("torchlight.course", "for instructors: the student edition and its checks"),
]


@dataclass
class Page:
    """One reference page: its module, blurb, and where each of its public names is documented."""

    module: str
    blurb: str
    members: List[str]  # documented here by the module's directive
    elsewhere: Dict[str, str]  # name -> where it is documented: "torchlight.autograd.no_grad"
    shadowed: Dict[str, str] = field(default_factory=dict)  # name -> the path it is defined at
    constants: Dict[str, str] = field(default_factory=dict)  # name -> its value, as text
    submodules: List[str] = field(default_factory=list)  # names of submodules, each with its own page
    runtime: Dict[str, object] = field(default_factory=dict)  # name -> an object made at run time

    @property
    def src_uri(self) -> str:
        """Where the page lies in the site: ``reference/torchlight.nn.md``."""
        return f"reference/{self.module}.md"

    def names(self) -> List[str]:
        """Every public name the page accounts for."""
        return [*self.members, *self.elsewhere, *self.shadowed, *self.runtime, *self.constants, *self.submodules]

    def markdown(self) -> str:
        """The page: a title, the blurb, the module's docstring and members, and links for the rest."""
        lines = [f"# `{self.module}`", "", f"*{self.blurb[0].upper()}{self.blurb[1:]}.*", ""]
        lines += [f"::: {self.module}", "    options:", "      show_root_heading: false"]
        if self.members:
            lines.append("      members:")
            lines += [f"        - {name}" for name in self.members]
        else:
            lines.append("      members: false")
        for name, path in self.shadowed.items():
            # The anchor carries the public name, which the heading's id (the defining path) does not.
            lines += ["", f"[](){{#{self.module}.{name}}}", "", f"::: {path}", "    options:"]
            lines += ["      show_root_heading: true", "      show_root_full_path: false", "      heading_level: 2"]
        for name, obj in self.runtime.items():
            lines += ["", *_from_the_object(f"{self.module}.{name}", name, obj)]
        if self.constants:
            lines += ["", "## Constants", "", "| name | value |", "|---|---|"]
            for name, value in self.constants.items():
                lines.append(f'| <span id="{self.module}.{name}"></span>`{self.module}.{name}` | `{value}` |')
        if self.submodules:
            lines += ["", "## Submodules", ""]
            lines += [f"- [`{self.module}.{name}`]({self.module}.{name}.md)" for name in self.submodules]
        if self.elsewhere:
            lines += ["", "## Documented on another page", ""]
            for name, target in sorted(self.elsewhere.items()):
                page = _page_of(target)
                lines.append(f"- `{self.module}.{name}`: see [`{target}`]({page}.md#{target})")
        return "\n".join(lines) + "\n"


def _from_the_object(anchor: str, name: str, obj: object) -> List[str]:
    """A heading, signature and docstring for an object that static analysis cannot read."""
    try:
        signature = str(inspect.signature(obj))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        signature = "(...)"
    kind = "class" if inspect.isclass(obj) else "function"
    doc = fields_as_tables(plain(inspect.getdoc(obj) or ""))
    return [f"## `{name}` {{#{anchor}}}", "", f"*{kind}*", "", "```python", f"{anchor}{signature}", "```", "", doc]


def _page_of(target: str) -> str:
    """The page that documents ``target`` (a dotted path): the longest page name that prefixes it."""
    owner = _owner(target.rsplit(".", 1)[0], [p for p, _ in REFERENCE])
    return owner if owner is not None else target.rsplit(".", 1)[0]


def exported(module: ModuleType) -> List[str]:
    """The public names of a module: its ``__all__``, or the public names defined in it."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items() if getattr(obj, "__module__", None) == module.__name__]
    return [n for n in names if not n.startswith("_")]


def public_names(module: ModuleType) -> List[str]:
    """The functions and classes a module offers (its exported names, less submodules and constants)."""
    return [n for n in exported(module) if _documentable(getattr(module, n, None))]


def _documentable(obj: object) -> bool:
    return inspect.isclass(obj) or inspect.isroutine(obj)


def _describe(value: object) -> str:
    """A constant as the table shows it: its repr, or a container by its keys."""
    if isinstance(value, dict):
        text = "{" + ", ".join(repr(k) for k in value) + "}: " + type(value).__name__
    else:
        text = repr(value)
    text = " ".join(text.split()).replace("|", "\\|").replace("`", "'")
    return text if len(text) <= 100 else text[:97] + "..."


def _shadowed(module: str, name: str) -> bool:
    """Whether ``module.name`` is also a submodule, which mkdocstrings's static analysis finds first."""
    try:
        return importlib.util.find_spec(f"{module}.{name}") is not None
    except (ImportError, ValueError):
        return False


def _static_kinds() -> Callable[[str], str]:
    """What mkdocstrings finds at a dotted path, reading the code as it does (griffe): "class",
    "function", "attribute", "module"; without griffe (no docs extra), what the object is."""
    try:
        import griffe
    except ImportError:
        return lambda path: "class" if inspect.isclass(_resolve(path)) else "function"
    import torchlight

    package = griffe.load("torchlight", search_paths=[str(Path(torchlight.__file__).parent.parent)])

    def kind(path: str) -> str:
        found: Any = package
        for part in path.split(".")[1:]:
            found = found.members.get(part) if hasattr(found, "members") else None
            while found is not None and found.is_alias:
                found = found.final_target
            if found is None:
                return "missing"
        return str(found.kind.value)

    return kind


def _resolve(path: str) -> object:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def pages() -> List[Page]:
    """Every reference page, each object placed on exactly one."""
    static = _static_kinds()
    modules = {name: importlib.import_module(name) for name, _ in REFERENCE}
    exports: Dict[str, List[Tuple[str, object]]] = {
        name: [(n, getattr(m, n)) for n in public_names(m)] for name, m in modules.items()
    }
    home: Dict[int, Tuple[str, str]] = {}  # id(object) -> (page, the name it has there)
    for page, _ in REFERENCE:
        for name, obj in exports[page]:
            if id(obj) in home:
                continue
            owner = _owner(getattr(obj, "__module__", "") or "", [p for p, _ in REFERENCE])
            there = [n for n, o in exports[owner] if o is obj] if owner is not None else []
            home[id(obj)] = (owner, there[0]) if owner is not None and there else (page, name)
    result = []
    for page, blurb in REFERENCE:
        module = modules[page]
        mine = [(n, obj) for n, obj in exports[page] if home[id(obj)][0] == page]
        shadowed = {n: f"{obj.__module__}.{obj.__qualname__}" for n, obj in mine if _shadowed(page, n)}
        made = {n: obj for n, obj in mine if n not in shadowed and static(f"{page}.{n}") not in ("class", "function")}
        members = [n for n, _ in mine if n not in shadowed and n not in made]
        elsewhere = {n: ".".join(home[id(obj)]) for n, obj in exports[page] if home[id(obj)][0] != page}
        rest = [n for n in exported(module) if not _documentable(getattr(module, n, None))]
        submodules = [n for n in rest if inspect.ismodule(getattr(module, n, None))]
        constants = {n: _describe(getattr(module, n)) for n in rest if n not in submodules and hasattr(module, n)}
        result.append(Page(page, blurb, members, elsewhere, shadowed, constants, submodules, made))
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
