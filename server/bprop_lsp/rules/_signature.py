"""Shared reading of a Cell bprop's signature, so that each signature rule reports one thing.

MindSpore's calling convention (bprop-rules.md): ``bprop(self, *forward_inputs, out, dout)``; only
the positional count matters, names do not; GRAPH_MODE skips a first parameter only if it is
literally named ``self``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.context import CellSite, Context, Signature
from ..engine.definitions import Function
from ..engine.mindspore_api import JIT_NAMES, is_mindspore
from ..engine.model import Edit, Fix, Position, Related, Span
from ..engine.param_edits import fresh, insert_after, is_dout_like, is_out_like, parameters_span, used_names
from ..engine.trees import iter_scope_nodes


@dataclass
class SignatureView:
    site: CellSite
    fn: Function
    decorators: list[str]
    kind: str  # "method" | "staticmethod" | "classmethod" | "lambda"
    has_self: bool
    jit: bool
    opaque_decorator: bool  # a decorator whose effect on the signature we cannot see
    unwrapped_decorator: str | None  # a decorator in the file returning a *args wrapper without functools.wraps
    wrapper: Function | None
    inputs: list[str] | None
    input_range: tuple[int, int] | None
    params: list = field(default_factory=list)  # positional parameters after self
    # Under a ``functools.wraps`` decorator whose ``*args`` wrapper hands on only some of what it gets (a
    # torch-style adapter ``fn(self, args[-1])``): GRAPH reads the wrapped signature, PYNATIVE calls the wrapper
    # (bprop-rules.md, further behaviours 35).
    adapted: bool = False

    @property
    def count(self) -> int:
        return len(self.params)

    def expected_text(self) -> str:
        names = ["self", *(self.inputs or []), "out", "dout"]
        return "(" + ", ".join(names) + ")"


def def_span(ctx: Context, fn: Function) -> Span:
    """Where signature findings point: the ``def`` line's name (lambda: the attribute)."""
    p = ctx.program
    if fn.name_node is not None:
        return p.span(fn.name_node)
    stmt = fn.node.parent
    return p.span(stmt.children[0] if stmt is not None and stmt.type == "expr_stmt" else fn.node)


def header_span(ctx: Context, fn: Function) -> Span:
    """From ``def`` (or the first decorator) to the end of the parameter list."""
    p = ctx.program
    if fn.node.type != "funcdef":
        return def_span(ctx, fn)
    start = fn.decorators[0].start_pos if fn.decorators else fn.node.start_pos
    return p.span(start, fn.params_node.end_pos)


def construct_related(ctx: Context, site: CellSite) -> tuple[Related, ...]:
    if site.construct is None or site.construct.name_node is None:
        return ()
    inputs = site.inputs
    what = f"construct of {site.cls.name} takes {len(inputs)} input(s)" if inputs is not None else f"construct of {site.cls.name}"
    return (Related(ctx.program.span(site.construct.name_node), what, path=foreign_path(site, site.construct)),)


def foreign_path(site: CellSite, fn: Function) -> str | None:
    """The file of ``fn`` when its class is in another module of the workspace than the site's, else None."""
    owner = fn.owner
    home = owner.program if owner is not None else None
    if home is None or home.workspace is None or home is site.cls.program:
        return None
    return home.path


def decorator_wraps_args(ctx: Context, name: str) -> tuple[bool | None, Function | None]:
    """For a decorator defined in this file: (True, wrapper) if it returns a ``*args`` wrapper without
    ``functools.wraps``, False if it keeps the signature visible, None if unknown."""
    fns = ctx.program.functions.get(name)
    if not fns:
        return None, None
    dec = fns[-1]
    inner = [n for n in iter_scope_nodes(dec.body) if n.type == "funcdef"]
    if not inner:
        return None, None
    for wrapper in inner:
        wfn = Function(wrapper, wrapper.name.value)
        parent = wrapper.parent
        decorated_by_wraps = False
        if parent is not None and parent.type == "decorated":
            code = parent.children[0].get_code()
            decorated_by_wraps = "wraps" in code
        if decorated_by_wraps:
            return False, wfn
        if any(p.kind == "vararg" for p in wfn.params):
            return True, wfn
    return None, None


def view(ctx: Context, site: CellSite) -> SignatureView | None:
    cache = ctx.__dict__.setdefault("_signature_views", {})
    if id(site) in cache:
        return cache[id(site)]
    result = _view(ctx, site)
    cache[id(site)] = result
    return result


def _view(ctx: Context, site: CellSite) -> SignatureView | None:
    fn = site.function
    if fn is None:
        return None
    p = ctx.program
    decorators = fn.decorator_names
    kind = "lambda" if fn.is_lambda else "method"
    resolved = site.resolved
    if resolved is not None and resolved.binding in ("staticmethod", "classmethod"):
        kind = resolved.binding  # ``bprop = staticmethod(f)`` binds like the decorator
    jit = bool(resolved is not None and resolved.jit)
    opaque = False
    adapted = False
    unwrapped = None
    wrapper = None
    for name in decorators:
        if name == "staticmethod":
            kind = "staticmethod"
        elif name == "classmethod":
            kind = "classmethod"
        elif is_mindspore(p.resolve_dotted(name), JIT_NAMES, bare=("jit", "ms.jit", "ms_function")):
            jit = True
        else:
            wraps, wrapper_fn = decorator_wraps_args(ctx, name)
            if wraps is True:
                unwrapped, wrapper = name, wrapper_fn
            elif wraps is None:
                opaque = True
            elif wrapper_fn is not None and _adapts(wrapper_fn):
                adapted = True
    params = fn.params
    has_self = kind == "method" or kind == "lambda"
    if has_self:
        has_self = bool(params) and params[0].name == "self" and params[0].kind in ("positional", "posonly")
    if kind == "classmethod" and params:
        rest = params[1:]
    elif has_self:
        rest = params[1:]
    else:
        rest = params
    positional = [q for q in rest if q.kind in ("positional", "posonly")]
    return SignatureView(site, fn, decorators, kind, has_self, jit, opaque, unwrapped, wrapper,
                         site.inputs, site.input_range, positional, adapted)


def _adapts(wrapper: Function) -> bool:
    """A ``*args`` wrapper (no ``**kwargs``, no other parameter) that never hands ``*args`` on whole."""
    params = wrapper.params
    star = next((q for q in params if q.kind == "vararg"), None)
    if star is None or any(q.kind == "varkw" for q in params):
        return False
    for node in iter_scope_nodes(wrapper.body):
        if node.type in ("argument", "star_expr") and node.children[0] == "*" \
                and getattr(node.children[1], "value", None) == star.name:
            return False
    return True


def arity_applies(v: SignatureView) -> bool:
    """Whether a plain positional count check is meaningful (nothing more specific applies)."""
    if v.opaque_decorator or v.unwrapped_decorator or v.kind in ("staticmethod", "classmethod"):
        return False
    if v.input_range is None:
        return False
    if any(q.kind in ("vararg", "varkw") for q in v.fn.params):
        return False
    if v.site.construct is not None and Signature(v.site.construct, skip_self=True).kwonly:
        return False  # BP008 speaks for it
    return True


def counted_vararg(v: SignatureView):
    """The ``*rest`` after a full positional list (``bprop(self, x, out, dout, *_)``): GRAPH counts it as one more
    parameter and fails with BP002's message, PYNATIVE passes it nothing (bprop-rules.md, further behaviours 36).
    None for any other signature."""
    if v.opaque_decorator or v.unwrapped_decorator or v.kind != "method" or not v.has_self:
        return None
    if v.input_range is None or v.input_range[0] != v.input_range[1]:
        return None
    stars = [q for q in v.fn.params if q.kind in ("vararg", "varkw")]
    if len(stars) != 1 or stars[0].kind != "vararg" or any(q.kind == "kwonly" for q in v.fn.params):
        return None
    if v.count != v.input_range[1] + 2 or any(q.has_default for q in v.params):
        return None
    return stars[0]


def counts(v: SignatureView) -> tuple[int, int]:
    """(positional parameters PYNATIVE fills after binding the cell, positional parameters GRAPH fills): GRAPH
    skips a first parameter only if it is literally named ``self``; PYNATIVE binds the cell to the first
    parameter whatever its name (bprop-rules.md, further behaviours 1)."""
    if v.has_self:
        return v.count, v.count
    return v.count - 1, v.count


def missing_params_fix(ctx: Context, v: SignatureView) -> tuple[Fix | None, list[str]]:
    """Insert exactly the missing trailing parameters, named after construct's inputs, ``out`` and ``dout``; with
    the names of the missing ones (neither, when the fix cannot be built: the finding stands without it)."""
    try:
        return _missing_params_fix(ctx, v)
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - a fix we cannot build costs the fix only
        ctx.fix_failed("BP001", exc)
        return None, []


def _missing_params_fix(ctx: Context, v: SignatureView) -> tuple[Fix | None, list[str]]:
    fn = v.fn
    inputs = v.inputs
    missing_labels: list[str] = []
    if inputs is None or not ctx.want_fixes:
        return None, missing_labels
    if not v.has_self:
        # `bprop(ctx, grad_output)`: which of the parameters stands for what is a guess; name them, fix nothing.
        taken = used_names(fn, ctx.program)
        return None, [fresh(name, taken) for name in inputs] + ["out", "dout"]
    params = list(v.params)
    dout = params[-1] if params and is_dout_like(params[-1].name) and params[-1].name not in inputs else None
    body = params[:-1] if dout is not None else params
    out = body[-1] if body and is_out_like(body[-1].name) and body[-1].name not in inputs else None
    if out is None and dout is None and len(body) == len(inputs) + 1:
        out = body[-1]  # e.g. a localized name for out (输出): the count says it is out
    present_inputs = body[:-1] if out is not None else body
    if len(present_inputs) > len(inputs):
        return None, missing_labels
    kw_only = any(q.kind == "kwonly" and not q.has_default for q in fn.params)
    # No fix is built around a keyword-only parameter without a default, so the names only label what is missing,
    # as the expected signature spells it: a keyword-only `dout` lacks a positional `dout`, not a `dout_1`.
    taken = set() if kw_only else used_names(fn, ctx.program)
    new_inputs = [fresh(name, taken) for name in inputs[len(present_inputs):]]
    new_out = [] if out is not None else [fresh("out", taken)]
    new_dout = [] if dout is not None else [fresh("dout", taken)]
    missing_labels = new_inputs + new_out + new_dout
    if (fn.node.type not in ("funcdef", "lambdef") or v.site.inherited and _owner_has_construct(ctx, v.site)
            or kw_only):
        return None, missing_labels
    index = ctx.program.index
    self_param = fn.params[0] if v.has_self else None
    anchor = present_inputs[-1] if present_inputs else self_param
    middle = new_inputs + new_out
    if dout is None:
        if out is not None:
            if middle:
                return None, missing_labels  # `out` present but inputs short: which is which is unclear
            edits = insert_after(fn, out, new_dout, index)
        else:
            edits = insert_after(fn, anchor, middle + new_dout, index)
    else:
        if out is not None and middle:
            return None, missing_labels
        edits = insert_after(fn, anchor, middle, index)
    if not edits:
        return None, missing_labels
    title = "Add missing parameter" + ("s " if len(missing_labels) > 1 else " ") + ", ".join(f"`{n}`" for n in missing_labels)
    if v.adapted:
        # A functools.wraps adapter calls the def with what it picks (``fn(self, args[-1])``): GRAPH would take the
        # fixed signature, PYNATIVE's call through the adapter would then fail (probe p22_13's fixed program).
        return None, missing_labels
    return Fix(title, tuple(edits), repairs=parameters_span(fn)), missing_labels


def _owner_has_construct(ctx: Context, site: CellSite) -> bool:
    member = ctx.program.lookup(site.bprop.owner, "construct")
    return member is not None


def decorator_removal(ctx, fn, name: str):
    """An edit deleting the line of decorator ``name`` (only when it stands alone on its line)."""
    for dec, dec_name in zip(fn.decorators, fn.decorator_names):
        if dec_name == name:
            start_line = dec.start_pos[0] - 1
            index = ctx.program.index
            line = index.line_text(start_line)
            if line.strip() != dec.get_code().strip():
                return None
            return Edit(Span(Position(start_line, 0), Position(start_line + 1, 0)), "")
    return None
