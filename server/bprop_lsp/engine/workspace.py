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
from .import_lines import import_words
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
                 digest_bytes: Callable[[bytes], str] | None = None, index_later: bool = False,
                 words_hint: Callable[[str], frozenset[bytes] | None] | None = None):
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
        # The importer index (``importers``): the project's Python files (listed once), the words of each one's
        # import statements (read once per file, or per text of an open one), and per analysed module the words
        # its mode questions searched for (a file that comes to import one is a change it depends on).
        self._listing: list[str] | None = None
        self._import_words: dict[str, frozenset[bytes]] = {}
        # ``index_later`` (the server): ``importers`` answers None (not known yet) until ``build_index`` has read
        # every file's import words, off the analyses' thread; the modules that asked meanwhile are ``waiting``.
        self.index_later = index_later
        # ``words_hint(path)``: a file's import words known without reading it (the CLI's cache, for the file's stat
        # now), or None (read it).
        self._words_hint = words_hint
        self._indexed = False
        self._waiting: set[str] = set()
        self._searched: dict[str, set[bytes]] = {}
        self._mode_edges: dict[str, set[str]] = {}  # analysed path -> the files its mode was searched for in
        self._lock = threading.RLock()
        self._busy = threading.local()

    # -- inputs ---------------------------------------------------------------------------------------------
    def set_overlay(self, path: str, text: str) -> None:
        """An open document's text: read instead of the file at ``path``."""
        path = os.path.abspath(path)
        with self._lock:
            self._overlay[path] = text
            self._modules.pop(path, None)
            self._import_words.pop(path, None)
            if self._listing is not None and path not in self._listing:
                self._listing = None

    def take_overlays(self, other: "Workspace") -> None:
        """The open texts of ``other`` (a workspace this one replaces, with more roots)."""
        with self._lock:
            self._overlay.update(other._overlay)
            self._edges.update({k: set(v) for k, v in other._edges.items()})
            self._mode_edges.update({k: set(v) for k, v in other._mode_edges.items()})
            self._searched.update({k: set(v) for k, v in other._searched.items()})

    def drop_overlay(self, path: str) -> None:
        path = os.path.abspath(path)
        with self._lock:
            self._overlay.pop(path, None)
            self._modules.pop(path, None)
            self._import_words.pop(path, None)

    def invalidate(self, path: str) -> None:
        """The file at ``path`` changed on disk (created, changed or deleted): read it again when asked."""
        path = os.path.abspath(path)
        with self._lock:
            self._modules.pop(path, None)
            self._files.clear()  # (a module created or deleted changes which file a name is)
            self._import_words.pop(path, None)
            if self._listing is not None and (path not in self._listing or not os.path.isfile(path)):
                self._listing = None  # (a file created or deleted)

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
        return self._resolve(program, text, self._in_module)

    def _resolve(self, program, text: str, then):
        """``then`` (``_in_module``, ``_value_in_module``) for what ``text`` (``name`` or ``module.name``) of
        ``program`` names through its module-level imports; None: not imported from a project module."""
        path = getattr(program, "path", None)
        if path is None:
            return None
        head, _, rest = text.partition(".")
        qual = self._binding(program, head)
        if qual is None:
            return None
        return self._find_in_module(f"{qual}.{rest}" if rest else qual, path, 0, then)

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
        return self._find_in_module(qual, importer, depth, self._in_module)

    def _find_in_module(self, qual: str, importer: str, depth: int, then):
        """``then(program, names, depth)`` in the module of the project that the longest prefix of ``qual`` names
        (its read recorded), for the rest of ``qual``'s names; None: no such module, or too deep."""
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
            return then(program, parts[i:], depth)
        return None

    @contextmanager
    def _entered_once(self, key) -> Iterator[bool]:
        """Whether ``key`` is not being resolved already on this thread (False: a cycle of re-exports)."""
        busy = getattr(self._busy, "keys", None)
        if busy is None:
            busy = self._busy.keys = set()
        if key in busy:
            yield False
            return
        busy.add(key)
        try:
            yield True
        finally:
            busy.discard(key)

    def _in_module(self, program, names: list[str], depth: int):
        with self._entered_once((program.path, tuple(names))) as entered:
            if not entered:
                return None  # a cycle of re-exports: unknown
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

    # -- values: functions bound in another module (a bprop, an ops.Custom func) ---------------------------
    def resolve_value(self, program, text: str):
        """(the ``Program`` of another module of the project, a name it binds at module level other than by an
        import) that ``text`` (``name`` or ``module.name``) of ``program`` names through its module-level imports:
        ``from .grads import scale_bprop`` + ``scale_bprop``, ``from . import grads`` + ``grads.scale_bprop``,
        re-exports followed. None: not imported from a project module (unknown). What the name is bound to is the
        caller's to read, in that program (``values.py``)."""
        return self._resolve(program, text, self._value_in_module)

    def _find_value(self, qual: str, importer: str, depth: int):
        return self._find_in_module(qual, importer, depth, self._value_in_module)

    def _value_in_module(self, program, names: list[str], depth: int):
        with self._entered_once(("value", program.path, tuple(names))) as entered:
            if not entered:
                return None  # a cycle of re-exports: unknown
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

    # -- the importer index ---------------------------------------------------------------------------------
    def python_files(self) -> list[str]:
        """Every ``.py`` file under the roots (hidden folders, ``__pycache__``, virtual environments and
        ``site-packages`` apart; at most ``MAX_LISTED`` files), and the open documents' paths under them; listed
        once, again after a file is created or deleted."""
        with self._lock:
            if self._listing is not None:
                return self._listing
        found = dict.fromkeys(python_files_under(self.roots))
        with self._lock:
            for path in self._overlay:
                if path.endswith(".py") and self.module_name(path) is not None:
                    found[path] = None
            self._listing = list(found)[:MAX_LISTED]
            return self._listing

    def words_of(self, path: str) -> frozenset[bytes]:
        """The words of the import statements of the file at ``path`` (its open text first), as bytes."""
        with self._lock:
            found = self._import_words.get(path)
            if found is not None:
                return found
            text = self._overlay.get(path)
        raw = text.encode("utf-8", "surrogatepass") if text is not None else None
        if raw is None and self._words_hint is not None:
            found = self._words_hint(path)
            if found is not None:
                with self._lock:
                    self._import_words[path] = found
                return found
        if raw is None:
            try:
                if os.path.getsize(path) <= MAX_MODULE_BYTES:
                    with open(path, "rb") as f:
                        raw = f.read(MAX_MODULE_BYTES + 1)
            except OSError:
                raw = None
        found = import_words(raw) if raw is not None else frozenset()
        with self._lock:
            self._import_words[path] = found
        return found

    def build_index(self, progress: Callable[[int, int], None] | None = None,
                    pause: Callable[[], None] | None = None) -> set[str]:
        """Read the import words of every file of the project (``python_files``) now: what ``importers`` searches.
        ``progress(done, total)`` is called every few hundred files, ``pause()`` between files (a caller giving
        way to more urgent work). The paths of the modules whose ``importers`` answered "not known yet"
        meanwhile (``index_later``): their analyses may tell more now."""
        if pause is not None:
            pause()
        files = self.python_files()
        for i, path in enumerate(files):
            if pause is not None:
                pause()
            self.words_of(path)
            if progress is not None and (i % 200 == 0 or i == len(files) - 1):
                progress(i + 1, len(files))
        with self._lock:
            self._indexed = True
            waiting, self._waiting = self._waiting, set()
        return waiting

    @property
    def indexed(self) -> bool:
        return self._indexed or not self.index_later

    def searched_words(self, path: str) -> frozenset[bytes]:
        """The words the analysis of ``path`` searched the project's import statements for (its mode, read in the
        modules importing it: ``importers``); empty when it searched none. Such an analysis depends on which files
        spell one of them (``files_importing``), a file that comes to do so included."""
        return frozenset(self._searched.get(os.path.abspath(path), ()))

    def importers(self, path: str, name: str, asking: str | None = None) -> list[tuple] | None:
        """Where the modules of the project import ``name`` of the module at ``path`` (a class or function bound at
        its top level): ``(program, bound name, scope, attributes)`` for each import statement that binds it,
        directly (``from pkg.model import Net as N``: ``("N", None, ())``) or through its module (``import
        pkg.model``: ``("pkg", None, ("model", "Net"))``; ``from pkg import model``: ``("model", None,
        ("Net",))``), also where a package's ``__init__.py`` re-exports it (``from .model import Net`` there, then
        ``from pkg import Net``); ``scope`` is the function the import statement is in (None: the module). The
        files searched are those whose import statements spell the module's last name (``words_of``), each parsed
        once per content; every file searched is noted as a mode dependency of ``asking`` (the module analysed)
        and a read of it recorded (``("workspace", path)``). None (``index_later``, before ``build_index`` is
        done): not known yet."""
        if not self.indexed:
            with self._lock:
                if not self._indexed:
                    if asking is not None:
                        self._waiting.add(os.path.abspath(asking))
                    return None
        path = os.path.abspath(path)
        here = self.module_name(path)
        if here is None:
            return []
        targets = [(f"{here[0]}.{name}", path)]
        found: list[tuple] = []
        done: set[str] = set()
        consulted: set[str] = set()
        while targets and len(done) < 8:
            target, file = targets.pop(0)
            if target in done:
                continue
            done.add(target)
            module, _, leaf = target.rpartition(".")
            word = module.rpartition(".")[2].encode("ascii", "replace")
            if asking is not None:
                with self._lock:
                    self._searched.setdefault(os.path.abspath(asking), set()).add(word)
            for candidate in self.python_files():
                if candidate == path or word not in self.words_of(candidate):
                    continue
                consulted.add(candidate)
                query.record(("workspace", candidate), self.digest(candidate))
                text = self._module(candidate)
                if text is None or leaf not in text.text:
                    continue  # (never names it: no use of it to read; still a file it depends on)
                program = self.program(candidate)
                if program is None:
                    continue
                where = self.module_name(candidate)
                for bound, scope, attrs, level in self._bindings_of(program, module, leaf):
                    if not level and self._file_from(candidate, module) != file:
                        continue  # (another module of that name: the one beside the script, in another project)
                    found.append((program, bound, scope, attrs))
                    if where is not None and where[1] and scope is None and not attrs:
                        targets.append((f"{where[0]}.{bound}", candidate))  # a package's __init__.py re-exports it
        if asking is not None and consulted:
            with self._lock:
                self._mode_edges.setdefault(os.path.abspath(asking), set()).update(consulted)
        return found

    def _bindings_of(self, program, module: str, name: str) -> list[tuple]:
        """The names ``program``'s import statements bind to ``module.name`` or a module on the way to it."""
        target = f"{module}.{name}"
        found = []
        for node in program.import_nodes:
            scope = _import_scope(node)
            if scope is False:
                continue
            try:
                if node.type == "import_from" and node.is_star_import():
                    source = self._absolute(program, node.level, ".".join(n.value for n in node.get_from_names()))
                    file = self.module_file(module) if source == module else None
                    exporter = self.program(file) if file is not None else None
                    if exporter is not None and _exports(exporter, name):
                        found.append((name, scope, (), node.level))
                    continue
                pairs = list(zip(node.get_defined_names(), node.get_paths()))
            except (AttributeError, IndexError, ValueError):
                continue
            for bound_leaf, dotted_path in pairs:
                bound = bound_leaf.value
                dotted = ".".join(p.value for p in dotted_path)
                if node.type == "import_name":
                    qual = dotted if _aliased(node, bound_leaf) or len(dotted_path) == 1 else dotted_path[0].value
                else:
                    qual = self._absolute(program, node.level, dotted)
                if qual is None:
                    continue
                level = 0 if node.type == "import_name" else node.level
                if qual == target:
                    found.append((bound, scope, (), level))
                elif target.startswith(qual + "."):
                    found.append((bound, scope, tuple(target[len(qual) + 1:].split(".")), level))
        return found

    def _file_from(self, script: str, module: str) -> str | None:
        """The file an absolute import of ``module`` in the file ``script`` finds: in the nearest folder at or
        above the script's (within the outermost root holding it) that holds the module's top package, as a
        script run from there or beside it finds it first; else the roots' (``module_file``)."""
        parts = module.split(".")
        folder = os.path.dirname(script)
        outer = next((str(r) for r in sorted(self.roots, key=lambda r: len(r.parts))
                      if _is_under(script, str(r))), None)
        while outer is not None and _is_under(folder, outer):
            top = os.path.join(folder, parts[0])
            if os.path.isdir(top) or os.path.isfile(top + ".py") or top + ".py" in self._overlay:
                base = os.path.join(folder, *parts)
                for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                    if candidate in self._overlay or os.path.isfile(candidate):
                        return candidate
                return None
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        return self.module_file(module)

    # -- dependencies ---------------------------------------------------------------------------------------
    def depends_on(self, path: str, modes: bool = True) -> dict[str, str | None]:
        """Every file the analysis of ``path`` consulted, directly or through the modules it consulted: path ->
        its digest now (None: looked for and absent); with ``modes``, the files its mode was searched for in too
        (``importers``: the entry scripts that import it, and what they import it through)."""
        start = os.path.abspath(path)
        seen: dict[str, str | None] = {}
        stack = list(self._edges.get(start, ()))
        if modes:
            stack.extend(self._mode_edges.get(start, ()))
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
        found = [p for p in among if changed in self.depends_on(p)]
        searched = [p for p in among if p not in found and self._searched.get(os.path.abspath(p))]
        if searched:
            words = self.words_of(changed) if os.path.isfile(changed) or changed in self._overlay else frozenset()
            # (a file that comes to import a module whose mode was searched for: its mode may come from there now)
            found += [p for p in searched if not words.isdisjoint(self._searched[os.path.abspath(p)])]
        return found

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
MAX_LISTED = 20000  # files the importer index lists under the roots (past it: the rest is not searched)
_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages", "build", "dist"})


def python_files_under(roots) -> list[str]:
    """Every ``.py`` file under ``roots`` as ``Workspace.python_files`` lists them (without open documents)."""
    found: dict[str, None] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            if "pyvenv.cfg" in files:
                dirs[:] = []
                continue
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_FOLDERS)
            for name in sorted(files):
                if name.endswith(".py"):
                    found[os.path.join(folder, name)] = None
            if len(found) > MAX_LISTED:
                break
    return list(found)[:MAX_LISTED]


def files_importing(roots, words: frozenset[bytes], words_of: Callable[[str], frozenset[bytes]]) -> list[str]:
    """The Python files under ``roots`` (``python_files_under``) whose import statements spell one of ``words``
    (``words_of(path)``: a file's import words, ``import_words``): where a search for the modules importing one
    looks, as the files stand now (the CLI's cache compares it with the search's: ``Workspace.searched_words``)."""
    return [path for path in python_files_under(roots) if not words.isdisjoint(words_of(path))]


def _is_under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _import_scope(node):
    """The function an import statement binds in (None: the module; False: a class body)."""
    n = node.parent
    while n is not None and n.type != "file_input":
        if n.type == "classdef":
            return False
        if n.type == "funcdef":
            return n
        n = n.parent
    return None


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
