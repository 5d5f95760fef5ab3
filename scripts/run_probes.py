#!/usr/bin/env python3
"""Run the labelled probe programs of tests/fixtures/probes/cases under MindSpore in GRAPH_MODE and
PYNATIVE_MODE and record what actually happens into tests/fixtures/probes/labels.json.

A copy of the shared oracle's run_oracle.py (same child bootstrap, same label schema), pointed at the
project's probe folder. Needs a Python with mindspore==2.10.0 and numpy<2 (--python or ORACLE_PYTHON).

Usage:
    python3 scripts/run_probes.py --python /path/to/msvenv/bin/python            # all probes -> labels.json
    python3 scripts/run_probes.py --python ... tests/fixtures/probes/cases/p01_x.py  # only these (merged in)
    python3 scripts/run_probes.py --python ... --timeout 120 --jobs 2

Each case is a plain user-style program.  It does NOT choose the execution
mode itself: this script runs it through a small bootstrap (this same file
with --child) that calls ``mindspore.set_context(mode=...)`` and then executes
the case file unchanged (same path, same line numbers, CRLF/tabs preserved),
so locations reported by MindSpore map 1:1 onto the case source.

Case metadata is read from leading comment lines of the form
    # ORACLE rule: <RULE-ID>
    # ORACLE expect: broken | divergent | valid
    # ORACLE note: free text
``expect`` is the author's intent only; the labels record the observed
behaviour (``observed``) and flag any disagreement (``expect_matches``).

Nothing in labels.json is hand-written: statuses, exception types, messages
and line numbers all come from the runs.
"""
import argparse
import ast
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SCRIPT = os.path.abspath(__file__)
HERE = os.path.join(os.path.dirname(os.path.dirname(SCRIPT)), "tests", "fixtures", "probes")
CASES_DIR = os.path.join(HERE, "cases")
LABELS = os.path.join(HERE, "labels.json")
DEFAULT_PY = "python3"  # set ORACLE_PYTHON to a python that has mindspore==2.10.0 and numpy<2
MODES = ("GRAPH", "PYNATIVE")
RESULT_MARK = "@@ORACLE_RESULT@@"


# --------------------------------------------------------------------------
# helpers shared by parent and child
# --------------------------------------------------------------------------
def read_source(path):
    with open(path, "rb") as f:
        raw = f.read()
    return raw.decode("utf-8")


def func_defs(src):
    """[(def_line, first_line_incl_decorators, end_line, name, qualname)]"""
    tree = ast.parse(src)
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                q = prefix + child.name
                out.append((child.lineno, first, child.end_lineno, child.name, q))
                visit(child, q + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def returned_inner_def(src, def_line):
    """For a bprop *getter* (bprop_getters function or Primitive.get_bprop)
    starting at def_line, return the def line of the nested function it
    returns (the function MindSpore actually calls), or None."""
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == def_line:
            inner = {n.name: n.lineno for n in node.body if isinstance(n, ast.FunctionDef)}
            for n in ast.walk(node):
                if isinstance(n, ast.Return) and isinstance(n.value, ast.Name) and n.value.id in inner:
                    return inner[n.value.id]
    return None


def enclosing_def(defs, line):
    """Innermost function def (its `def` line) whose span contains `line`."""
    best = None
    for d in defs:
        if d[1] <= line <= d[2]:
            if best is None or d[1] >= best[1]:
                best = d
    return best


def parse_meta(src):
    meta = {}
    for ln in src.splitlines():
        m = re.match(r"\s*#\s*ORACLE\s+(\w+)\s*:\s*(.*?)\s*$", ln)
        if m:
            key, val = m.group(1).lower(), m.group(2)
            meta[key] = (meta[key] + " " + val) if key in meta else val
    return meta


# --------------------------------------------------------------------------
# child: runs inside the MindSpore interpreter
# --------------------------------------------------------------------------
def _first_line(msg):
    """First informative line: skips blank lines and MindSpore's '-----' /
    '- Section title:' banner lines."""
    lines = [ln.strip() for ln in str(msg).splitlines() if ln.strip()]
    for ln in lines:
        if re.fullmatch(r"-{5,}", ln) or re.fullmatch(r"- [A-Za-z+ ()]+:", ln):
            continue
        return ln
    return lines[0] if lines else ""


def _code_of(obj):
    import inspect
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if inspect.ismethod(obj):
        obj = obj.__func__
    try:
        obj = inspect.unwrap(obj)
    except Exception:  # pylint: disable=broad-except
        pass
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return getattr(obj, "__code__", None)


def _targets(g, case_path):
    """Find the custom-bprop functions defined in the case file, by runtime
    introspection of what the program built (classes, instances, registry)."""
    import inspect
    import mindspore.nn as nn
    from mindspore.ops.primitive import Primitive
    found = []  # (kind, owner, code)

    def add(kind, owner, fn):
        code = _code_of(fn)
        if code is not None and os.path.abspath(code.co_filename) == case_path:
            found.append((kind, owner, code))

    seen_cls = set()

    def scan_class(cls):
        if cls in seen_cls:
            return
        seen_cls.add(cls)
        try:
            if issubclass(cls, nn.Cell):
                for klass in cls.__mro__:
                    if "bprop" in klass.__dict__:
                        add("cell.bprop", cls.__qualname__, klass.__dict__["bprop"])
                        break
            elif issubclass(cls, Primitive):
                for klass in cls.__mro__:
                    for nm in ("get_bprop", "bprop"):
                        if nm in klass.__dict__:
                            add("primitive." + nm, cls.__qualname__, klass.__dict__[nm])
        except TypeError:
            pass

    def scan_obj(v, depth=0):
        if isinstance(v, type):
            if getattr(v, "__module__", None) == "__main__":
                scan_class(v)
            return
        if depth > 2:
            return
        try:
            from mindspore.ops import Custom
            if isinstance(v, Custom):
                bp = getattr(v, "bprop", None)
                if callable(bp):
                    add("custom.bprop", "Custom", bp)
        except Exception:  # pylint: disable=broad-except
            pass
        if isinstance(v, (nn.Cell, Primitive)) and type(v).__module__ == "__main__":
            scan_class(type(v))
            if isinstance(v, Primitive) and hasattr(v, "get_bprop"):
                try:
                    fn = v.get_bprop()
                    add("primitive.get_bprop()", type(v).__qualname__, fn)
                except Exception:  # pylint: disable=broad-except
                    pass
        if isinstance(v, nn.Cell):
            for sub in list(getattr(v, "_cells", {}).values()):
                scan_obj(sub, depth + 1)
            for attr in list(vars(v).values()):
                if isinstance(attr, (Primitive,)) or type(attr).__name__ == "Custom":
                    scan_obj(attr, depth + 1)
            for attr in list(getattr(v, "_primitives", {}).values()):
                scan_obj(attr, depth + 1)

    for v in list(g.values()):
        scan_obj(v)
    for bp in _CUSTOM_BPROPS:
        add("custom.bprop", "Custom", bp)

    # bprop_getters / bprops registries: entries whose code lives in the case
    try:
        from mindspore.ops._grad_experimental.grad_base import bprop_getters, bprops
        for reg_name, reg in (("bprop_getters", bprop_getters), ("bprops", bprops)):
            for key, fn in list(reg.items()):
                if not isinstance(key, str):
                    continue  # same getter is also registered under the class name
                code = _code_of(fn)
                if code is None or os.path.abspath(code.co_filename) != case_path:
                    continue
                if reg_name == "bprop_getters":
                    # the def in question is the inner bprop the getter returns;
                    # instantiate by calling getter with a matching primitive
                    prim_inst = None
                    for v in list(g.values()):
                        if isinstance(v, Primitive) and (type(v).__name__ == key or v.name == key):
                            prim_inst = v
                            break
                        if isinstance(v, nn.Cell):
                            for attr in vars(v).values():
                                if isinstance(attr, Primitive) and (type(attr).__name__ == key or attr.name == key):
                                    prim_inst = attr
                    inner = None
                    if prim_inst is not None:
                        try:
                            inner = fn(prim_inst)
                        except Exception:  # pylint: disable=broad-except
                            inner = None
                    if inner is not None and _code_of(inner) is not None:
                        add("bprop_getters[%s]()" % key, str(key), inner)
                    else:
                        add("bprop_getters[%s]" % key, str(key), fn)
                else:
                    add("bprops[%s]" % key, str(key), fn)
    except Exception:  # pylint: disable=broad-except
        pass

    # the function MindSpore actually calls as bprop first, then getters
    found.sort(key=lambda f: 1 if (f[0] in ("primitive.get_bprop",) or
                                   (f[0].startswith("bprop_getters[") and not f[0].endswith("()"))) else 0)
    uniq, seen = [], set()
    for kind, owner, code in found:
        k = (code.co_firstlineno, code.co_name)
        if k in seen:
            continue
        seen.add(k)
        uniq.append({"kind": kind, "owner": owner, "name": code.co_name,
                     "first_line": code.co_firstlineno})
    return uniq


_CUSTOM_BPROPS = []


def _record_custom_bprops():
    """Observe (not alter) every ops.Custom construction so that the bprop
    function handed to it can be located afterwards, even when the Custom
    op lives inside a Cell instance that is not reachable from globals."""
    import functools
    from mindspore.ops.operations.custom_ops import Custom
    orig = Custom.__init__

    @functools.wraps(orig)
    def init(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        bp = getattr(self, "bprop", None)
        if callable(bp):
            _CUSTOM_BPROPS.append(bp)

    Custom.__init__ = init


def child_main(mode, case_path):
    import traceback
    case_path = os.path.abspath(case_path)
    result = {"mode": mode}
    src = read_source(case_path)
    # The case must BE the __main__ module: MindSpore's graph parser resolves
    # global names through sys.modules[fn.__module__].
    import types
    mod = types.ModuleType("__main__")
    mod.__file__ = case_path
    mod.__builtins__ = __builtins__
    sys.modules["__main__"] = mod
    g = mod.__dict__
    t0 = time.time()
    try:
        import mindspore as ms
        ms.set_context(mode=ms.GRAPH_MODE if mode == "GRAPH" else ms.PYNATIVE_MODE)
        _record_custom_bprops()
        code = compile(src, case_path, "exec")
        sys.argv = [case_path]
        sys.path.insert(0, os.path.dirname(case_path))
        exec(code, g)  # pylint: disable=exec-used
        result["status"] = "ok"
    except BaseException as e:  # pylint: disable=broad-except
        if isinstance(e, SystemExit) and not e.code:
            result["status"] = "ok"
        else:
            result["status"] = "error"
            result["exc_type"] = type(e).__name__
            msg = str(e)
            result["message"] = _first_line(msg)
            result["full_message_head"] = "\n".join(msg.splitlines()[:6])
            # locations inside the case file: from the traceback frames...
            tb_lines = [fs.lineno for fs in traceback.extract_tb(e.__traceback__)
                        if os.path.abspath(fs.filename) == case_path]
            result["tb_case_lines"] = tb_lines
            # ...and from MindSpore's own "In file <case>:L" annotations
            pat = re.compile(r"In file (.+?):(\d+)(?:~\d+)?, ")
            msg_lines = []
            for m in pat.finditer(msg):
                if os.path.abspath(m.group(1)) == case_path:
                    msg_lines.append(int(m.group(2)))
            result["msg_case_lines"] = msg_lines
            m = re.search(r"C\+\+ Call Stack:.*?\n-+\n(\S+:\d+ \S+)", msg, re.S)
            if m:
                result["cpp_site"] = m.group(1)
    result["seconds"] = round(time.time() - t0, 2)
    try:
        result["targets"] = _targets(g, case_path)
    except Exception as e:  # pylint: disable=broad-except
        result["targets"] = []
        result["targets_error"] = repr(e)
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(1, ("\n" + RESULT_MARK + json.dumps(result) + "\n").encode())
    os._exit(0)  # skip MindSpore atexit teardown noise


# --------------------------------------------------------------------------
# parent
# --------------------------------------------------------------------------
# "[WARNING] ME(pid:tid,MainProcess):date [file:line] message" and
# "[ERROR] ANALYZER(pid,tid,python):date [file:line] Function] message"
WARN_RE = re.compile(r"^\[(WARNING|ERROR)\] \S+ \[[^\]]+\] (?:\w+\] )?(.*)")


def run_one(py, case, mode, timeout, logdir):
    workdir = tempfile.mkdtemp(prefix="oracle_%s_" % mode.lower())
    env = dict(os.environ)
    env["GLOG_v"] = env.get("GLOG_v", "2")  # WARNING and above
    env["PYTHONUNBUFFERED"] = "1"
    env["ORACLE_MODE"] = mode
    cmd = [py, SCRIPT, "--child", mode, os.path.abspath(case)]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, timeout=timeout)
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        rc = p.returncode
        timed_out = False
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        err = (e.stderr or b"").decode("utf-8", "replace")
        rc = None
        timed_out = True
    wall = round(time.time() - t0, 2)
    shutil.rmtree(workdir, ignore_errors=True)
    base = os.path.splitext(os.path.basename(case))[0]
    with open(os.path.join(logdir, "%s.%s.log" % (base, mode)), "w") as f:
        f.write("$ %s\n--- stdout ---\n%s\n--- stderr ---\n%s\n" % (" ".join(cmd), out, err))
    res = None
    for ln in out.splitlines():
        if ln.startswith(RESULT_MARK):
            res = json.loads(ln[len(RESULT_MARK):])
    if res is None:
        res = {"mode": mode, "status": "timeout" if timed_out else "crash", "returncode": rc,
               "message": (err.strip().splitlines() or [""])[-1][:300]}
    res["wall_seconds"] = wall
    # what the program printed (its own stdout, without MindSpore log lines)
    prog_out = [ln for ln in out.split("\n" + RESULT_MARK)[0].splitlines()
                if ln.strip() and not ln.startswith("[WARNING]") and not ln.startswith("[ERROR]")]
    res["stdout_tail"] = "\n".join(prog_out[-6:])[-600:]
    # cases end with print("grads:", ...): keep exactly that part for the
    # GRAPH-vs-PYNATIVE comparison
    body = "\n".join(prog_out)
    k = body.rfind("grads:")
    res["grads_printed"] = body[k:][:1500] if k >= 0 else None
    # MindSpore warnings that mention bprop / gradients (deduplicated, no paths)
    warns = []
    for ln in err.splitlines():
        m = WARN_RE.search(ln)
        if m and re.search(r"bprop|grad|Parameter|deprecat", m.group(2), re.I):
            w = re.sub(r"/[^\s:'\"]+/", "", m.group(2)).strip()
            if w not in warns:
                warns.append(w[:300])
    res["warnings"] = warns[:5]
    # UserWarnings printed by Python's warnings module
    pyw = []
    for ln in err.splitlines():
        m = re.search(r"(\w*Warning): (.*)", ln)
        if m and "[WARNING]" not in ln:
            s = "%s: %s" % (m.group(1), m.group(2).strip())
            if s not in pyw:
                pyw.append(s[:300])
    res["py_warnings"] = pyw[:5]
    return res


def summarize_mode(res, defs):
    """Reduce a child result to the label record for one mode."""
    out = {"status": res["status"]}
    if res.get("grads_printed"):
        out["grads_printed"] = res["grads_printed"]
    elif res.get("stdout_tail"):
        out["stdout_tail"] = res["stdout_tail"]
    if res["status"] != "ok":
        out["exc_type"] = res.get("exc_type")
        out["message"] = res.get("message")
        if res.get("cpp_site"):
            out["cpp_site"] = res["cpp_site"]
        # where MindSpore points in the case file (first msg annotation, else
        # innermost traceback frame in the case file), mapped to its def line
        where = None
        if res.get("msg_case_lines"):
            where = res["msg_case_lines"][0]
        elif res.get("tb_case_lines"):
            where = res["tb_case_lines"][-1]
        out["reported_line"] = where
        if where is not None:
            d = enclosing_def(defs, where)
            out["reported_def_line"] = d[0] if d else None
            out["reported_def_name"] = d[3] if d else None
    if res.get("warnings"):
        out["ms_warnings"] = res["warnings"]
    if res.get("py_warnings"):
        out["py_warnings"] = res["py_warnings"]
    return out


def _norm_out(text):
    """Printed gradients, normalised so that GRAPH and PYNATIVE printing
    differences (spacing, a trailing ',' in 1-tuples) do not count."""
    if text is None:
        return None
    return re.sub(r"\s+", "", text)


def build_label(case, results):
    src = read_source(case)
    defs = func_defs(src)
    meta = parse_meta(src)
    first_to_def = {d[1]: d for d in defs}
    # the bprop function(s) under test, found by introspection in the child
    targets = []
    for mode in MODES:
        for t in results[mode].get("targets", []):
            d = first_to_def.get(t["first_line"])
            if d is None:  # lambdas etc.: map via enclosing def
                d = enclosing_def(defs, t["first_line"])
            rec = {"kind": t["kind"], "owner": t["owner"], "name": t["name"],
                   "def_line": d[0] if d else t["first_line"]}
            if t["kind"] == "primitive.get_bprop" or (t["kind"].startswith("bprop_getters[")
                                                      and not t["kind"].endswith("()")):
                inner = returned_inner_def(src, rec["def_line"])
                if inner is not None:
                    rec = {"kind": t["kind"] + "()", "owner": t["owner"], "name": "bprop",
                           "getter_def_line": rec["def_line"], "def_line": inner}
            if rec not in targets:
                targets.append(rec)
    modes = {m: summarize_mode(results[m], defs) for m in MODES}
    errors = [m for m in MODES if modes[m]["status"] != "ok"]
    outputs_agree = None
    if not errors:
        g_out = modes["GRAPH"].get("grads_printed", modes["GRAPH"].get("stdout_tail"))
        p_out = modes["PYNATIVE"].get("grads_printed", modes["PYNATIVE"].get("stdout_tail"))
        outputs_agree = _norm_out(g_out) == _norm_out(p_out)
    # broken: MindSpore raises in at least one mode; divergent: runs in both
    # modes but prints different gradients; valid: runs, same result.
    observed = "broken" if errors else ("valid" if outputs_agree else "divergent")
    # offending def line: the bprop def under test, confirmed by where
    # MindSpore points when it does point into a def
    offending = None
    if errors or observed == "divergent":
        reported = [modes[m].get("reported_def_line") for m in errors]
        target_lines = [t["def_line"] for t in targets]
        for r in reported:
            if r is not None and r in target_lines:
                offending = r
                break
        if offending is None and len(target_lines) >= 1:
            offending = target_lines[0]
        # no custom-bprop def was found (e.g. an import error): leave it null;
        # the per-mode "reported_line" still says where MindSpore pointed.
    label = {
        "file": os.path.relpath(case, HERE).replace(os.sep, "/"),
        "rule": meta.get("rule"),
        "expect": meta.get("expect"),
        "note": meta.get("note"),
        "observed": observed,
        "expect_matches": (meta.get("expect") == observed) if meta.get("expect") else None,
        "offending_def_line": offending,
        "bprop_defs_under_test": targets,
        "modes_agree": (modes["GRAPH"]["status"] == modes["PYNATIVE"]["status"]),
        "outputs_agree": outputs_agree,
        "GRAPH": modes["GRAPH"],
        "PYNATIVE": modes["PYNATIVE"],
        "line_endings": "CRLF" if "\r\n" in src else "LF",
    }
    return label


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=2, metavar=("MODE", "CASE"))
    ap.add_argument("--python", default=os.environ.get("ORACLE_PYTHON", DEFAULT_PY))
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    ap.add_argument("--logdir", default=os.path.join(tempfile.gettempdir(), "probe_logs"))
    ap.add_argument("--out", default=LABELS)
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    if a.child:
        child_main(a.child[0], a.child[1])
        return
    os.makedirs(a.logdir, exist_ok=True)
    cases = a.cases or sorted(os.path.join(CASES_DIR, f) for f in os.listdir(CASES_DIR) if f.endswith(".py"))
    cases = [os.path.abspath(c) for c in cases]
    jobs = [(c, m) for c in cases for m in MODES]
    results = {c: {} for c in cases}
    t0 = time.time()
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(run_one, a.python, c, m, a.timeout, a.logdir): (c, m) for c, m in jobs}
        for n, fut in enumerate(cf.as_completed(futs), 1):
            c, m = futs[fut]
            results[c][m] = fut.result()
            r = results[c][m]
            print("[%3d/%d] %-8s %-45s %-7s %s %s" % (n, len(jobs), m, os.path.basename(c), r["status"],
                                                    r.get("exc_type") or "", (r.get("message") or "")[:90]),
                  flush=True)
    labels = {}
    if os.path.exists(a.out) and a.cases:
        with open(a.out, encoding="utf-8") as f:
            labels = {x["file"]: x for x in json.load(f)["cases"]}
    for c in cases:
        lab = build_label(c, results[c])
        labels[lab["file"]] = lab
    import platform
    ver = subprocess.run([a.python, "-c", "import mindspore,numpy,sys;print(mindspore.__version__, numpy.__version__, sys.version.split()[0])"],
                         capture_output=True, text=True).stdout.split()
    doc = {
        "generated_by": "scripts/run_probes.py",
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "mindspore": ver[0] if ver else None,
        "numpy": ver[1] if len(ver) > 1 else None,
        "python": ver[2] if len(ver) > 2 else None,
        "device_target": "CPU",
        "host": platform.machine(),
        "modes": list(MODES),
        "count": len(labels),
        "counts": {
            "broken": sum(1 for x in labels.values() if x["observed"] == "broken"),
            "valid": sum(1 for x in labels.values() if x["observed"] == "valid"),
            "divergent": sum(1 for x in labels.values() if x["observed"] == "divergent"),
            "modes_disagree": sum(1 for x in labels.values() if not x["modes_agree"]),
            "expect_mismatch": sum(1 for x in labels.values() if x["expect_matches"] is False),
        },
        "cases": [labels[k] for k in sorted(labels)],
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote %s: %s (%.0fs)" % (a.out, doc["counts"], time.time() - t0))
    bad = [x["file"] for x in labels.values() if x["expect_matches"] is False]
    if bad:
        print("EXPECT MISMATCH:", *bad, sep="\n  ")


if __name__ == "__main__":
    main()
