#!/usr/bin/env python3
"""Derive bprop-lsp's MindSpore knowledge from an installed MindSpore wheel (run with that wheel's Python).

    /path/to/msvenv/bin/python scripts/extract_mindspore_data.py [--out server/bprop_lsp/data] [--only Abs ReLU]

Writes three files (each with a header saying how and from what it was made):

* ``builtin_ops.txt`` — every public Primitive class name that ``mindspore.ops.operations`` exports.
* ``cpp_bprop_ops.txt`` — the Primitive names for which GRAPH_MODE uses a built-in (C++) bprop, so a Python
  bprop registered or declared under that name is never called. MindSpore 2.10 keeps its bprop expanders in a
  C++ registry that Python cannot list, so each name is *probed*: a ``PrimitiveWithInfer`` subclass with that
  class name and a ``get_bprop`` that records its call is differentiated in GRAPH_MODE
  (``bprop_utils.cc GetBprop`` tries the C++ expander first and falls back to ``get_bprop`` only when there is
  none). Verdicts: the getter ran → no C++ bprop; the gradient compiled without calling it, or MindSpore raised
  ``Bprop "<name>" encounter a problem`` from its expander → C++ bprop. Inputs are guessed (the real op's
  ``input_names`` or ``__call__`` signature, its default attributes, a few shapes and dtypes); when every guess
  fails in forward type inference (before autodiff) the name is *unknown* and left out of this list, so
  BP044 stays silent rather than guess. Every name of builtin_ops.txt and every string key of the wheel's own
  ``bprop_getters``/``bprops`` registries is probed. The probes run in a child process (some ops crash the
  interpreter on bad inputs: a crash marks that name unknown and a new child goes on with the rest).
* ``nn_cells.txt`` — every Cell class exported by ``mindspore.nn`` (and ``mindspore.mint.nn``) with the dotted
  paths it is exported under and the ``construct`` signature it has (inherited ones included).

The output is sorted and contains no timestamps or paths, so re-running on the same wheel reproduces it byte
for byte (a probe verdict depends only on the wheel). About 10 minutes on one core (each probe compiles a
graph).
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
DEFAULT_OUT = HERE.parents[1] / "server" / "bprop_lsp" / "data"
MARK = "@@PROBE@@"
SHAPES = ((2, 2), (1, 1, 4, 4), (2,), (1, 2, 2, 2, 2))
MAX_TRIES = 20
BATCH = 40


# ----------------------------------------------------------------------------------------------- enumeration
def _primitive_classes() -> dict[str, type]:
    """name -> class for every Primitive subclass defined or re-exported in mindspore.ops.operations.*"""
    import importlib
    import pkgutil

    import mindspore.ops.operations as P
    from mindspore.ops.primitive import Primitive

    found: dict[str, type] = {}
    modules = [P]
    for info in pkgutil.iter_modules(P.__path__):
        try:
            modules.append(importlib.import_module(f"mindspore.ops.operations.{info.name}"))
        except Exception:  # noqa: BLE001 - a module that does not import on this host has no names to give
            continue
    for mod in modules:
        for name, obj in sorted(vars(mod).items()):
            if inspect.isclass(obj) and issubclass(obj, Primitive) and obj.__name__ == name:
                found.setdefault(name, obj)
    return found


def builtin_op_names() -> list[str]:
    import mindspore.ops.operations as P
    from mindspore.ops.primitive import Primitive

    return sorted(n for n, o in vars(P).items()
                  if inspect.isclass(o) and issubclass(o, Primitive) and not n.startswith("_") and o.__name__ == n)


def registry_keys() -> set[str]:
    import mindspore.ops._grad_experimental  # noqa: F401 - registers the wheel's Python getters
    from mindspore.ops._grad_experimental.grad_base import bprop_getters, bprops

    return {k for reg in (bprop_getters, bprops) for k in reg if isinstance(k, str)}


def probe_names() -> list[str]:
    """The exported op names and the names the wheel registers Python bprops under (the private *Grad ops of
    the operations package are not probed: users do not register bprops for them)."""
    return sorted(set(builtin_op_names()) | registry_keys())


# ----------------------------------------------------------------------------------------------- nn cells
def _construct_signature(cls) -> dict:
    fn = cls.construct
    owner = next((k for k in cls.__mro__ if "construct" in k.__dict__), cls)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {"unknown": True, "owner": owner.__qualname__}
    params = list(sig.parameters.values())[1:]  # self
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return {
        "owner": f"{owner.__module__}.{owner.__qualname__}",
        "params": [p.name for p in positional],
        "defaults": sum(1 for p in positional if p.default is not p.empty),
        "vararg": next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None),
        "varkw": next((p.name for p in params if p.kind == p.VAR_KEYWORD), None),
        "kwonly": [p.name + ("=" if p.default is not p.empty else "") for p in params if p.kind == p.KEYWORD_ONLY],
    }


def nn_cells() -> list[tuple[str, list[str], dict]]:
    """(class key, exported dotted paths, construct signature) for every exported Cell class."""
    import importlib
    import pkgutil

    from mindspore.nn import Cell

    exports: dict[type, set[str]] = {}
    for root in ("mindspore.nn", "mindspore.mint.nn"):
        try:
            pkg = importlib.import_module(root)
        except Exception:  # noqa: BLE001
            continue
        names = [root]
        if hasattr(pkg, "__path__"):
            names += [m.name for m in pkgutil.walk_packages(pkg.__path__, root + ".", onerror=lambda _n: None)]
        for modname in names:
            if any(part.startswith("_") for part in modname.split(".")[1:]):
                continue
            try:
                mod = importlib.import_module(modname)
            except Exception:  # noqa: BLE001
                continue
            for name, obj in vars(mod).items():
                if name.startswith("_") or not inspect.isclass(obj) or not issubclass(obj, Cell):
                    continue
                if obj.__name__ != name:
                    continue  # an alias under another name: not how users spell the class
                public = getattr(mod, "__all__", None)
                if obj.__module__ != modname and not (isinstance(public, (list, tuple)) and name in public):
                    continue  # imported there for the module's own use, not exported
                exports.setdefault(obj, set()).add(f"{modname}.{name}")
    rows = []
    for cls, paths in exports.items():
        rows.append((f"{cls.__module__}.{cls.__qualname__}", sorted(paths), _construct_signature(cls)))
    return sorted(rows)


def _format_nn_row(key: str, paths: list[str], sig: dict) -> str:
    if sig.get("unknown"):
        return "\t".join([key, " ".join(paths), "?", "", "", "", "", sig["owner"]])
    return "\t".join([key, " ".join(paths), " ".join(sig["params"]) or "-", str(sig["defaults"]),
                      sig["vararg"] or "-", sig["varkw"] or "-", " ".join(sig["kwonly"]) or "-", sig["owner"]])


# ----------------------------------------------------------------------------------------------- probing (child)
def _real_op_facts(cls):
    """(input counts to try, attributes to copy) from the real op class, when it can be built with defaults."""
    from mindspore.ops.primitive import Primitive

    counts: list[int] = []
    attrs: dict = {}
    inst = None
    if cls is not None:
        try:
            inst = cls()
        except Exception:  # noqa: BLE001
            inst = None
    if inst is not None:
        attrs = {k: v for k, v in inst.attrs.items() if k not in ("input_names", "output_names", "side_effect_mem")}
        names = inst.attrs.get("input_names")
        if isinstance(names, (list, tuple)) and names:
            counts.append(len(names))
    call = getattr(cls, "__call__", None) if cls is not None else None
    if call is not None and call is not Primitive.__call__:
        try:
            ps = list(inspect.signature(call).parameters.values())[1:]
            if ps and all(p.kind == p.POSITIONAL_OR_KEYWORD for p in ps):
                counts.append(len(ps))
        except (TypeError, ValueError):
            pass
    return counts, attrs


def _probe_one(name: str, cls, state) -> tuple[str, str]:
    import re

    import numpy as np
    import mindspore as ms
    from mindspore import Tensor, nn, ops
    from mindspore.ops import PrimitiveWithInfer, prim_attr_register

    called = state.setdefault("called", [])

    class Net(nn.Cell):
        def __init__(self, op):
            super().__init__()
            self.op = op

        def construct(self, *xs):
            return self.op(*xs)

    def make(attrs):
        def __init__(self):
            pass

        def infer_shape(self, *shapes):
            return shapes[0]

        def infer_dtype(self, *dtypes):
            return dtypes[0]

        def get_bprop(self):
            called.append(name)

            def bprop(*args):
                return tuple(ops.zeros_like(a) for a in args[:-2])
            return bprop

        body = {"__init__": prim_attr_register(__init__), "infer_shape": infer_shape, "infer_dtype": infer_dtype,
                "get_bprop": get_bprop}
        inst = type(name, (PrimitiveWithInfer,), body)()
        for k, v in attrs.items():
            try:
                inst.add_prim_attr(k, v)
            except Exception:  # noqa: BLE001
                pass
        return inst

    def tensor(shape, kind):
        if kind.endswith("0"):
            shape, kind = (), kind[:-1]
        dtype = {"int": np.int32, "bool": np.bool_}.get(kind, np.float32)
        return Tensor(np.ones(shape, dtype))

    counts, attrs = _real_op_facts(cls)
    wheel_count = _wheel_getter_inputs(name)
    if wheel_count is not None:
        counts.insert(0, wheel_count)
    max_tries = MAX_TRIES * 3 if wheel_count is not None else MAX_TRIES  # the ops item 27 is about
    queue = list(dict.fromkeys(counts or [1, 2, 3]))
    last = ""
    tries = 0
    seen_counts = set()
    while queue and tries < max_tries:
        k = queue.pop(0)
        if k in seen_counts:
            continue
        seen_counts.add(k)
        retry_count = None
        for kinds in _input_plans(k):
            for shape in SHAPES:
                tries += 1
                xs = [tensor(shape, kd) for kd in kinds]
                called.clear()
                try:
                    ms.grad(Net(make(attrs)), grad_position=tuple(range(k)) if k else None)(*xs)
                    err = None
                except Exception as e:  # noqa: BLE001 - the message is the evidence
                    err = str(e)
                if name in called:
                    return "python", f"get_bprop called ({k} input(s))"
                if err is None:
                    return "cpp", f"gradient compiled without calling get_bprop ({k} input(s))"
                if re.search(r'Bprop "%s" encounter' % re.escape(name), err):
                    return "cpp", "the C++ bprop expander raised"
                last = err.strip().splitlines()[0][:160] if err.strip() else "?"
                m = re.search(r"input (?:number|num|numbers?)[^0-9]{0,40}?(\d+)", err) or re.search(
                    r"number of inputs[^0-9]{0,80}?(\d+)", err)
                if m and int(m.group(1)) not in seen_counts and 0 < int(m.group(1)) <= 12:
                    retry_count = int(m.group(1))
                if retry_count is not None or tries >= max_tries:
                    break
                if "shape" not in last and "rank" not in last and "dimension" not in last:
                    break  # a dtype/arity complaint: other shapes will not help
            if retry_count is not None or tries >= max_tries:
                break
        if retry_count is not None:
            queue.insert(0, retry_count)
    return "unknown", last


def _wheel_getter_inputs(name: str) -> int | None:
    """The input count of the inner ``bprop`` the wheel's own Python getter for ``name`` returns (read from its
    source: positional parameters minus out and dout), or None."""
    import ast
    import textwrap

    from mindspore.ops._grad_experimental.grad_base import bprop_getters

    getter = bprop_getters.get(name, None)
    if getter is None:
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(getter)))
    except (OSError, TypeError, SyntaxError):
        return None
    inner = [n for n in ast.walk(tree.body[0]) if isinstance(n, ast.FunctionDef) and n is not tree.body[0]]
    if len(inner) != 1 or inner[0].args.vararg is not None:
        return None
    n = len(inner[0].args.posonlyargs) + len(inner[0].args.args) - 2
    return n if n > 0 else None


def _input_plans(k: int) -> list[list[str]]:
    """Input kinds to try for k inputs, fewest deviations from "all float tensors" first. The first input is
    always a float tensor (the one differentiated); a trailing 0 means a scalar (0-d) tensor."""
    import itertools

    choices = ("float", "int", "bool", "int0", "float0")
    plans = [["float"] + list(rest) for rest in itertools.product(choices, repeat=max(k - 1, 0))]
    plans.sort(key=lambda p: sum(x != "float" for x in p))
    return plans if k else [[]]


def child_main() -> None:
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE)
    classes = _primitive_classes()
    state: dict = {}
    for line in sys.stdin:
        name = line.strip()
        if not name:
            continue
        os.write(1, f"{MARK}START {name}\n".encode())
        verdict, detail = _probe_one(name, classes.get(name), state)
        os.write(1, (MARK + json.dumps({"name": name, "verdict": verdict, "detail": detail}) + "\n").encode())
    os._exit(0)


# ----------------------------------------------------------------------------------------------- probing (parent)
def run_probes(names: list[str], timeout: float) -> dict[str, tuple[str, str]]:
    """Probe ``names`` in child processes of BATCH names each (a long-lived child slows down as MindSpore's
    compile caches grow); a child that crashes (or hangs past ``timeout`` seconds on one name) costs that name
    an "unknown" and a new child takes the rest."""
    import threading

    results: dict[str, tuple[str, str]] = {}
    pending = list(names)
    env = {k: v for k, v in os.environ.items() if k != "MS_DEV_USE_PY_BPROP"}
    env["GLOG_v"] = "3"  # errors only: the probes provoke many
    while pending:
        with tempfile.TemporaryDirectory(prefix="bprop_probe_") as work:
            proc = subprocess.Popen([sys.executable, str(HERE), "--child"], cwd=work, env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            proc.stdin.write("\n".join(pending[:BATCH]) + "\n")
            proc.stdin.close()
            current = None
            watchdog = threading.Timer(timeout, proc.kill)
            watchdog.start()
            for line in proc.stdout:
                if not line.startswith(MARK):
                    continue
                body = line[len(MARK):].rstrip("\n")
                if body.startswith("START "):
                    current = body[6:]
                    watchdog.cancel()
                    watchdog = threading.Timer(timeout, proc.kill)
                    watchdog.start()
                    continue
                rec = json.loads(body)
                results[rec["name"]] = (rec["verdict"], rec["detail"])
                current = None
            watchdog.cancel()
            proc.wait()
        print(f"probed {len(results)}/{len(names)}", file=sys.stderr, flush=True)
        if current is not None:
            results[current] = ("unknown", "the probe crashed or timed out")
        pending = [n for n in pending if n not in results]
    return results


# ----------------------------------------------------------------------------------------------- main
def _versions() -> str:
    import mindspore
    import numpy

    return f"MindSpore {mindspore.__version__} (CPU wheel), numpy {numpy.__version__}, Python {sys.version.split()[0]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--only", nargs="*", help="probe these names only and print the verdicts (writes nothing)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds one name may take")
    a = ap.parse_args()
    if a.child:
        child_main()
        return 0
    if a.only:
        for name, (verdict, detail) in sorted(run_probes(a.only, a.timeout).items()):
            print(f"{name}\t{verdict}\t{detail}")
        return 0
    out = Path(a.out)
    made = f"# Made by scripts/extract_mindspore_data.py from {_versions()}.\n"

    builtins = builtin_op_names()
    (out / "builtin_ops.txt").write_text(
        "# Primitive class names exported by mindspore.ops.operations (public names only).\n" + made
        + "# Not all of them have a C++ bprop: see cpp_bprop_ops.txt.\n" + "\n".join(builtins) + "\n", encoding="utf-8")

    results = run_probes(probe_names(), a.timeout)
    cpp = sorted(n for n, (v, _) in results.items() if v == "cpp")
    python = sorted(n for n, (v, _) in results.items() if v == "python")
    unknown = sorted(n for n, (v, _) in results.items() if v == "unknown")
    (out / "cpp_bprop_ops.txt").write_text(
        "# Primitive names whose gradient MindSpore takes from a built-in C++ bprop in GRAPH_MODE: a Python bprop\n"
        "# registered (bprop_getters.register) or declared (get_bprop on a same-named Primitive) for them is never\n"
        "# called. Found by probing each name (see the script's docstring): "
        f"{len(results)} names probed, {len(cpp)} use a C++ bprop,\n"
        f"# {len(python)} call the Python get_bprop, {len(unknown)} unknown (type inference rejected every guessed "
        "input; left out).\n" + made
        + "".join(f"# python: {' '.join(python[i:i + 12])}\n" for i in range(0, len(python), 12))
        + "".join(f"# unknown: {' '.join(unknown[i:i + 12])}\n" for i in range(0, len(unknown), 12))
        + "\n".join(cpp) + "\n", encoding="utf-8")

    rows = nn_cells()
    (out / "nn_cells.txt").write_text(
        "# Cell classes exported by mindspore.nn and mindspore.mint.nn, with their construct signature.\n" + made
        + "# Columns (tab-separated): defining module.class, exported dotted paths (space-separated), positional\n"
        "# parameters after self ('-' none, '?' unreadable), how many of them have defaults, *args name, **kwargs\n"
        "# name, keyword-only parameters ('name=' has a default), class that defines construct.\n"
        + "\n".join(_format_nn_row(*r) for r in rows) + "\n", encoding="utf-8")
    print(f"builtin_ops {len(builtins)}, cpp_bprop_ops {len(cpp)} (python {len(python)}, unknown {len(unknown)}), "
          f"nn_cells {len(rows)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
