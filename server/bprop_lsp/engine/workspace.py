"""The workspace: the project's modules as inputs of an analysis, so that a Cell whose base class lives in another
module of the project is checked against that base (its MRO, ``construct``, members) as MindSpore binds it.

    ws = Workspace([project_root])                 # roots: the folders modules are named from (see ``Workspace``)
    ws.set_overlay(path, text)                     # an open document's text wins over the file on disk
    with ws.scope(path):                           # analyses in the block resolve bases through the workspace
        analysis = analyze(text, settings, rules=rules)
    ws.depends_on(path)                            # {path: digest | None}: the files its findings may depend on

Nothing is imported or run: a module is read (the overlay, else the file), parsed once per content digest and
scanned into its own ``Program``. A module no root holds (third-party, the standard library, a typo) is unknown: a
base from there resolves as it does without a workspace (never a guess).

The hook is small: ``Program.resolve_class`` asks ``resolve_base(program, text)`` for a base it would otherwise
leave as a name; the MRO, ``construct`` and members of a class found in another module are that module's
``Program``'s. Every module consulted is noted as an edge (importer -> module, or a path looked for and absent),
so a file's dependencies are the closure of its edges (``depends_on``), and a read of another module is recorded
on the query layer (``query.record(("workspace", path), digest)``).
"""
from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from . import query
from .definitions import ClassInfo
from .parsing import parse_text
from .program import Program
from .roots import import_roots
from .scope import CURRENT

MAX_MODULE_BYTES = 4 * 1024 * 1024  # a larger module is unknown (no base read from it)
_KEPT = 32  # programs of texts no module has now, kept for a text that comes back (an undo)
_ABSENT = None


def _text_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class _Module:
    __slots__ = ("path", "digest", "text", "program")

    def __init__(self, path: str, digest: str, text: str):
        self.path, self.digest, self.text = path, digest, text
        self.program = None


class Workspace:
    """The project's modules (see the module docstring). ``roots``: the project folders (each one's import roots
    are ``import_roots``: ``[tool.bprop-lsp] src`` or the folder and its ``src/``); ``read(path) -> bytes``
    reads a file (default: the file system); ``digest_bytes(raw) -> str`` is the digest a caller keys files by
    (the CLI's cache), default a blake2b of the text."""

    def __init__(self, roots=(), *, src: tuple[str, ...] | None = None, read: Callable[[str], bytes] | None = None,
                 digest_bytes: Callable[[bytes], str] | None = None):
        self.roots: list[Path] = []
        for root in roots:
            for r in import_roots(Path(os.path.abspath(root)), src):
                if r not in self.roots:
                    self.roots.append(r)
        self._read = read
        self._digest_bytes = digest_bytes
        self._overlay: dict[str, str] = {}
        self._modules: dict[str, _Module | None] = {}  # path -> module as last read (None: unreadable/absent)
        # text digest -> Program (parsed once per content), the least recently used dropped past ``_KEPT`` more than
        # the modules read (a module edited keystroke by keystroke in an editor leaves one per text otherwise)
        self._programs: OrderedDict[str, object] = OrderedDict()
        self._files: dict[str, str | None] = {}  # module name -> path (None: no root holds it)
        self._edges: dict[str, set[str]] = {}  # importer path -> paths it consulted (found or absent)
        self._lock = threading.RLock()
        self._busy = threading.local()

    # -- inputs ---------------------------------------------------------------------------------------------
    def set_overlay(self, path: str, text: str) -> None:
        """An open document's text: read instead of the file at ``path``."""
        path = os.path.abspath(path)
        with self._lock:
            self._overlay[path] = text
            self._modules.pop(path, None)

    def take_overlays(self, other: "Workspace") -> None:
        """The open texts of ``other`` (a workspace this one replaces, with more roots)."""
        with self._lock:
            self._overlay.update(other._overlay)
            self._edges.update({k: set(v) for k, v in other._edges.items()})

    def drop_overlay(self, path: str) -> None:
        path = os.path.abspath(path)
        with self._lock:
            self._overlay.pop(path, None)
            self._modules.pop(path, None)

    def invalidate(self, path: str) -> None:
        """The file at ``path`` changed on disk (created, changed or deleted): read it again when asked."""
        path = os.path.abspath(path)
        with self._lock:
            self._modules.pop(path, None)
            self._files.clear()  # (a module created or deleted changes which file a name is)

    def digest(self, path: str) -> str | None:
        """The digest of the module at ``path`` as the workspace reads it now (None: absent or unreadable)."""
        module = self._module(os.path.abspath(path))
        return module.digest if module is not None else None

    def _module(self, path: str) -> _Module | None:
        with self._lock:
            if path in self._modules:
                return self._modules[path]
            module = None
            text = self._overlay.get(path)
            raw = None
            if text is None:
                try:
                    if self._read is not None:
                        raw = self._read(path)
                    elif os.path.isfile(path) and os.path.getsize(path) <= MAX_MODULE_BYTES:
                        with open(path, "rb") as f:
                            raw = f.read(MAX_MODULE_BYTES + 1)
                except OSError:
                    raw = None
                if raw is not None and len(raw) <= MAX_MODULE_BYTES:
                    try:
                        text = raw.decode("utf-8-sig")
                    except UnicodeDecodeError:
                        text = None
            if text is not None:
                digest = self._digest_bytes(raw) if raw is not None and self._digest_bytes is not None \
                    else _text_digest(text)
                module = _Module(path, digest, text)
            self._modules[path] = module
            return module

    def program(self, path: str):
        """The ``Program`` of the module at ``path`` (parsed once per content), or None."""
        module = self._module(os.path.abspath(path))
        if module is None:
            return None
        if module.program is None:
            key = _text_digest(module.text)
            program = self._programs.get(key)
            if program is None or getattr(program, "path", None) != module.path:
                # (parsed outside the lock: an editor's thread setting an open text never waits for a parse)
                program = Program(parse_text(module.text), module.text, workspace=self, path=module.path)
            with self._lock:
                self._programs[key] = program
                self._programs.move_to_end(key)
                while len(self._programs) > len(self._modules) + _KEPT:
                    self._programs.popitem(last=False)
            module.program = program
        return module.program

    # -- names ----------------------------------------------------------------------------------------------
    def module_name(self, path: str) -> tuple[str, bool] | None:
        """(dotted name, is a package) of the module at ``path`` from the innermost root holding it, or None."""
        path = Path(os.path.abspath(path))
        best = None
        for root in self.roots:
            try:
                rel = path.relative_to(root)
            except ValueError:
                continue
            if best is None or len(rel.parts) < len(best.parts):
                best = rel
        if best is None or best.suffix not in (".py", ".pyi"):
            return None
        parts = list(best.with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts = parts[:-1]
        if not parts or not all(p.isidentifier() for p in parts):
            return None
        return ".".join(parts), package

    def module_file(self, name: str, importer: str | None = None) -> str | None:
        """The file of module ``name`` (``a/b.py`` or ``a/b/__init__.py`` under the first root that holds one), or
        None: no root holds it (third-party or unresolved: unknown). Each path looked for is noted as an edge of
        ``importer``."""
        found = self._files.get(name, _MISSING)
        if found is _MISSING:
            found = None
            looked = []
            parts = name.split(".")
            for root in self.roots:
                base = root.joinpath(*parts)
                for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
                    candidate = str(candidate)
                    looked.append(candidate)
                    if candidate in self._overlay or os.path.isfile(candidate):
                        found = candidate
                        break
                if found is not None:
                    break
            self._files[name] = found
            self._files[(name, "looked")] = looked  # type: ignore[index]
        if importer is not None:
            edges = self._edges.setdefault(importer, set())
            edges.update(self._files.get((name, "looked"), ()))  # type: ignore[arg-type]
            if found is not None:
                edges.add(found)
        return found

    # -- the hook -------------------------------------------------------------------------------------------
    def resolve_base(self, program, text: str):
        """The class a base-class expression ``text`` of ``program`` names in another module of the project
        (``ClassInfo``), or None (not imported from a project module: the program decides as without a
        workspace)."""
        path = getattr(program, "path", None)
        if path is None:
            return None
        head, _, rest = text.partition(".")
        qual = self._binding(program, head)
        if qual is None:
            return None
        return self._find_class(f"{qual}.{rest}" if rest else qual, path, 0)

    def _binding(self, program, name: str) -> str | None:
        """The absolute dotted name the module-level import of ``name`` in ``program`` binds (relative imports
        resolved against the program's module), or None."""
        found = None
        for node in program.import_nodes:
            bound = _bound_by(node, name)
            if bound is None:
                continue
            dotted = self._absolute(program, *bound)
            if dotted is not None:
                found = dotted
        return found or None

    def _absolute(self, program, level: int, dotted: str) -> str | None:
        """The absolute name of ``dotted`` imported at relative ``level`` (0: absolute) from ``program``'s module."""
        if not level:
            return dotted
        here = self.module_name(program.path)
        if here is None:
            return None
        parts = here[0].split(".")
        if not here[1]:
            parts = parts[:-1]  # a module's package
        up = level - 1
        if up > len(parts):
            return None
        parts = parts[:len(parts) - up] if up else parts
        return ".".join([*parts, dotted] if dotted else parts) or None

    def _star_sources(self, program, name: str) -> list[str]:
        """The absolute names of the modules ``program`` star-imports at module level (``from .layers import *``),
        last first, that can export ``name`` (not a private name)."""
        if name.startswith("_"):
            return []
        found = []
        for node in program.import_nodes:
            if node.type != "import_from" or _bound_by(node, "*") != "star":
                continue
            dotted = self._absolute(program, node.level, ".".join(n.value for n in node.get_from_names()))
            if dotted is not None:
                found.append(dotted)
        return found[::-1]

    def _find_class(self, qual: str, importer: str, depth: int):
        if depth > 16:
            return None
        parts = qual.split(".")
        for i in range(len(parts) - 1, 0, -1):
            path = self.module_file(".".join(parts[:i]), importer)
            if path is None:
                continue
            program = self.program(path)
            query.record(("workspace", path), self.digest(path))
            if program is None:
                return None
            return self._in_module(program, parts[i:], depth)
        return None

    def _in_module(self, program, names: list[str], depth: int):
        key = (program.path, tuple(names))
        busy = getattr(self._busy, "keys", None)
        if busy is None:
            busy = self._busy.keys = set()
        if key in busy:
            return None  # a cycle of re-exports: unknown
        busy.add(key)
        try:
            head = names[0]
            if len(names) == 1:
                cls = program.class_named(head)
                if cls is not None:
                    return cls if _module_level(cls.node) else None
            qual = self._binding(program, head)
            if qual is not None:
                return self._find_class(".".join([qual, *names[1:]]), program.path, depth + 1)
            if head not in program.assignments:
                for source in self._star_sources(program, head):  # ``from .layers import *`` in an __init__.py
                    path = self.module_file(source, program.path)
                    exporter = self.program(path) if path is not None else None
                    if exporter is None or not _exports(exporter, head):
                        continue
                    return self._find_class(".".join([source, *names]), program.path, depth + 1)
            if len(names) == 1:
                found = program.resolve_class(head)  # a module-level alias (``Base = layers.Base``)
                return found if isinstance(found, ClassInfo) else None
            return None
        finally:
            busy.discard(key)

    # -- values: functions bound in another module (a bprop, an ops.Custom func) ---------------------------
    def resolve_value(self, program, text: str):
        """(the ``Program`` of another module of the project, a name it binds at module level other than by an
        import) that ``text`` (``name`` or ``module.name``) of ``program`` names through its module-level imports:
        ``from .grads import scale_bprop`` + ``scale_bprop``, ``from . import grads`` + ``grads.scale_bprop``,
        re-exports followed. None: not imported from a project module (unknown). What the name is bound to is the
        caller's to read, in that program (``values.py``)."""
        path = getattr(program, "path", None)
        if path is None:
            return None
        head, _, rest = text.partition(".")
        qual = self._binding(program, head)
        if qual is None:
            return None
        return self._find_value(f"{qual}.{rest}" if rest else qual, path, 0)

    def _find_value(self, qual: str, importer: str, depth: int):
        if depth > 16:
            return None
        parts = qual.split(".")
        for i in range(len(parts) - 1, 0, -1):
            path = self.module_file(".".join(parts[:i]), importer)
            if path is None:
                continue
            program = self.program(path)
            query.record(("workspace", path), self.digest(path))
            if program is None:
                return None
            return self._value_in_module(program, parts[i:], depth)
        return None

    def _value_in_module(self, program, names: list[str], depth: int):
        key = ("value", program.path, tuple(names))
        busy = getattr(self._busy, "keys", None)
        if busy is None:
            busy = self._busy.keys = set()
        if key in busy:
            return None  # a cycle of re-exports: unknown
        busy.add(key)
        try:
            head = names[0]
            qual = self._binding(program, head)
            if qual is not None:
                return self._find_value(".".join([qual, *names[1:]]), program.path, depth + 1)
            if len(names) != 1:
                return None
            if head in program.assignments or head in program.functions:
                return program, head
            for source in self._star_sources(program, head):  # ``from .grads import *`` in an __init__.py
                path = self.module_file(source, program.path)
                exporter = self.program(path) if path is not None else None
                if exporter is None or not _exports(exporter, head):
                    continue
                return self._find_value(".".join([source, head]), program.path, depth + 1)
            return None
        finally:
            busy.discard(key)

    def may_inherit_bprop(self, text: str, path: str | None) -> bool:
        """Whether a class statement of ``text`` (the module at ``path``) names a base that another module of the
        project defines, on which attribute lookup finds a ``bprop``: then the file is read whole although it may
        not say "bprop" (its Cell is checked against the bprop it inherits). Read from the file's imports alone,
        and only a module that binds a ``bprop`` somewhere is parsed for it; the modules consulted are the file's
        dependencies like any other's."""
        found = self._project_bases(text, path)
        if not found:
            return False
        path, heads = found
        program = None
        for head, qual in heads:
            if not self._binds_bprop(qual, path):
                continue
            if program is None:
                imports = "\n".join(m.group(0) for m in _IMPORT_STATEMENT.finditer(text)) + "\n"
                program = Program(parse_text(imports), imports, workspace=self, path=path)
            cls = self.resolve_base(program, head)
            home = cls.program if cls is not None else None
            if home is not None and home.lookup(cls, "bprop") is not None:
                return True
        return False

    def has_project_bases(self, text: str, path: str | None) -> bool:
        """Whether a class statement of ``text`` names a base imported from a module of the project (its analysis
        then depends on that module, whatever ``text`` says: the CLI's cache keys it by its dependencies)."""
        return bool(self._project_bases(text, path))

    def _project_bases(self, text: str, path: str | None):
        """(the absolute path, [(base name, the absolute name it is imported as)]) for the bases of ``text``'s
        module-level classes imported at module level from a module some root holds; None when there is none.
        (Read with ``ast`` from the import statements alone: a file's imports, not its tree.)"""
        import ast

        if path is None:
            return None
        heads = {m.group(1) for m in _CLASS_BASES.finditer(text)}
        if not heads:
            return None
        imports = "\n".join(m.group(0) for m in _IMPORT_STATEMENT.finditer(text))
        if not imports:
            return None
        try:
            statements = ast.parse(imports).body
        except (SyntaxError, ValueError):
            return None
        bound: dict[str, tuple[int, str]] = {}
        for node in statements:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name != "*":
                        dotted = f"{node.module}.{alias.name}" if node.module else alias.name
                        bound[alias.asname or alias.name] = (node.level or 0, dotted)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        bound[alias.asname] = (0, alias.name)
                    else:
                        bound[alias.name.partition(".")[0]] = (0, alias.name.partition(".")[0])
        path = os.path.abspath(path)
        here = _Here(path)
        found = []
        for head in sorted(heads & bound.keys()):
            qual = self._absolute(here, *bound[head])
            if qual is not None and self._module_of(qual, path) is not None:
                found.append((head, qual))
        return (path, found) if found else None

    def _module_of(self, qual: str, importer: str) -> str | None:
        """The file of the module ``qual`` names or is in (``pkg.base`` of ``pkg.base.Base``), or None."""
        parts = qual.split(".")
        for i in range(len(parts), 0, -1):
            found = self.module_file(".".join(parts[:i]), importer)
            if found is not None:
                return found
        return None

    def _binds_bprop(self, qual: str, importer: str) -> bool:
        """Whether the module ``qual`` names or is in binds a ``bprop`` somewhere (``def bprop``, ``bprop = ``,
        ``setattr(..., "bprop", ...)``): a base re-exported by an ``__init__.py`` that does not is not
        followed (unknown)."""
        found = self._module_of(qual, importer)
        module = self._module(found) if found is not None else None
        return module is not None and _BINDS_BPROP.search(module.text) is not None

    def program_holding(self, node):
        """The program (of a module read) whose tree holds ``node``, or None."""
        root = node.get_root_node()
        with self._lock:
            modules = list(self._modules.values())
        for module in modules:
            if module is not None and module.program is not None and module.program.module is root:
                return module.program
        return None

    @contextmanager
    def entered(self, cls) -> Iterator[bool]:
        """Whether ``cls`` (of another program) is not already being linearised on this thread (a cycle of bases
        across modules: unknown)."""
        busy = getattr(self._busy, "classes", None)
        if busy is None:
            busy = self._busy.classes = set()
        if id(cls) in busy:
            yield False
            return
        busy.add(id(cls))
        try:
            yield True
        finally:
            busy.discard(id(cls))

    # -- dependencies ---------------------------------------------------------------------------------------
    def depends_on(self, path: str) -> dict[str, str | None]:
        """Every file the analysis of ``path`` consulted, directly or through the modules it consulted: path ->
        its digest now (None: looked for and absent)."""
        start = os.path.abspath(path)
        seen: dict[str, str | None] = {}
        stack = list(self._edges.get(start, ()))
        while stack:
            p = stack.pop()
            if p in seen or p == start:
                continue
            seen[p] = self.digest(p) if (p in self._overlay or os.path.isfile(p)) else None
            stack.extend(self._edges.get(p, ()))
        return seen

    def dependents(self, changed: str, among) -> list[str]:
        """The paths of ``among`` whose analyses depend on the file ``changed``."""
        changed = os.path.abspath(changed)
        return [p for p in among if changed in self.depends_on(p)]

    @contextmanager
    def scope(self, path: str | None):
        """Analyses in the block are of the module at ``path`` and resolve bases through this workspace."""
        if path is not None:
            path = os.path.abspath(path)
        # (Edges are kept from earlier analyses of the module too: a program carried from the last one resolves
        # nothing again, and a dependency too many only re-checks a file for nothing.)
        token = CURRENT.set((self, path))
        try:
            yield self
        finally:
            CURRENT.reset(token)


_MISSING = object()
_BINDS_BPROP = re.compile(r"\bdef[ \t]+bprop\b|\bbprop[ \t]*=(?!=)|\bsetattr\([^)\n]*[\"']bprop[\"']")


class _Here:
    """What ``Workspace._absolute`` reads of a program: its path."""

    __slots__ = ("path",)

    def __init__(self, path: str):
        self.path = path

# ``class Sub(Base, ...)`` at module level: the first name of its first base; module-level imports (parenthesised
# ``from m import (a, b)`` over several lines included): ``may_inherit_bprop``.
_CLASS_BASES = re.compile(r"^class[ \t]+\w+[ \t]*\([ \t]*([A-Za-z_]\w*)", re.M)
_IMPORT_STATEMENT = re.compile(r"^(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t]+[^\n]*)",
                               re.M)


def _module_level(node) -> bool:
    parent = node.parent
    if parent is not None and parent.type == "decorated":
        parent = parent.parent
    return parent is not None and parent.type == "file_input"


def _exports(program, name: str) -> bool:
    """Whether ``from module import *`` takes ``name`` from ``program``'s module: it binds it at module level and,
    when the module sets ``__all__``, names it there (an ``__all__`` not spelled as a literal: not known)."""
    declared = program.assignments.get("__all__")
    if declared:
        value = declared[-1]
        if value.type not in ("atom", "testlist_star_expr") or f'"{name}"' not in value.get_code() \
                and f"'{name}'" not in value.get_code():
            return False
    cls = program.class_named(name)
    return cls is not None and _module_level(cls.node) or name in program.assignments or \
        any(_bound_by(node, name) is not None for node in program.import_nodes)


def _bound_by(node, name: str):
    """(relative level, dotted name) that the import statement ``node`` binds ``name`` to, or None. ``import a.b``
    binds ``a`` to ``a``; ``from .m import X as Y`` binds ``Y`` to (1, ``m.X``). ``name == "*"``: "star" for a
    module-level ``from m import *``."""
    top = node
    while top.parent is not None and top.parent.type != "file_input":
        top = top.parent
        if top.type in ("funcdef", "classdef"):
            return None  # an import inside a function or class binds there, not in the module
    try:
        if node.type == "import_name":
            for bound, path in zip(node.get_defined_names(), node.get_paths()):
                if bound.value != name:
                    continue
                if bound.value == path[0].value and len(path) > 1 and not _aliased(node, bound):
                    return 0, path[0].value
                return 0, ".".join(p.value for p in path)
            return None
        level = node.level
        if name == "*":
            return "star" if node.is_star_import() else None
        for bound, path in zip(node.get_defined_names(), node.get_paths()):
            if bound.value == name:
                return level, ".".join(p.value for p in path)
    except (AttributeError, IndexError, ValueError):
        return None
    return None


def _aliased(node, name) -> bool:
    parent = name.parent
    return parent is not None and parent.type == "dotted_as_name"
