"""Which attributes of a Cell are MindSpore ``Parameter``s, read from ``__init__`` assignments."""
from __future__ import annotations

from ..engine.definitions import ClassInfo
from ..engine.mindspore_api import PARAMETER_NAMES, is_mindspore
from ..engine.trees import call_arguments, call_of, iter_own_nodes

# Parameters that MindSpore's built-in layers create (nn.Dense.weight, nn.BatchNorm2d.gamma, ...).
LAYER_PARAMETERS = {"weight", "bias", "gamma", "beta", "embedding_table", "moving_mean", "moving_variance"}


def _self_assignments(ctx, cls: ClassInfo):
    """(attribute, value node, statement) for ``self.attr = value`` in the class's own methods."""
    for member in cls.members.values():
        fn = member.function
        if fn is None or fn.is_lambda:
            continue
        yield from _function_self_assignments(ctx.program, fn.node)


def _self_assignments_of(ctx, cls: ClassInfo, attr: str) -> list:
    """``_self_assignments`` of the one attribute ``attr`` (value node, statement), kept with the class while its
    members stay the same (a keystroke elsewhere asks it of every Cell that mentions ``attr``)."""
    members = cls.members
    memo = cls.__dict__.setdefault("_self_assignments_of", {})
    kept = memo.get(attr)
    if kept is None or kept[0] is not members:
        kept = memo[attr] = (members, [(value, stmt) for name, value, stmt in _self_assignments(ctx, cls)
                                       if name == attr])
    return kept[1]


def _function_self_assignments(program, fn_node) -> list:
    """``_self_assignments`` of one method, read once per ``def`` and kept with its top-level statement."""
    facts = program.statement_facts(fn_node).setdefault("self_assignments", {})
    entry = facts.get(id(fn_node))
    if entry is None or entry[0] is not fn_node:
        found = []
        for node in iter_own_nodes(fn_node):
            if node.type != "expr_stmt" or len(node.children) < 3 or node.children[1] != "=":
                continue
            value = node.children[-1]
            for target in node.children[:-1:2]:
                if target.type in ("power", "atom_expr") and len(target.children) == 2 and target.children[0].type == "name" \
                        and target.children[0].value == "self" and target.children[1].children[0] == ".":
                    found.append((target.children[1].children[1].value, value, node))
        entry = facts[id(fn_node)] = (fn_node, found)
    return entry[1]


def _self_calls(ctx, cls: ClassInfo):
    """``_self_assignments`` with what each value calls, read once per ``def``: (attribute, statement, the callee's
    dotted name or None, the callees of a list/tuple display's entries or None when the value is no display)."""
    members = cls.members
    memo = cls.__dict__.get("_self_calls")
    if memo is None or memo[0] is not members:  # kept with the class while its members stay the same
        found = []
        for member in members.values():
            fn = member.function
            if fn is None or fn.is_lambda:
                continue
            found += ctx.program.node_fact(fn.node, "self_calls", _function_self_calls_of(ctx.program))
        memo = cls.__dict__["_self_calls"] = (members, found)
    return memo[1]


def _function_self_calls_of(program):
    def compute(fn_node) -> list:
        found = []
        for attr, value, stmt in _function_self_assignments(program, fn_node):
            c = call_of(value)
            callee = c[0] if c and c[0] else None
            items = None
            if value.type == "atom" and value.children[0] in ("[", "(") and len(value.children) == 3:
                inner = value.children[1]
                entries = [i for i in inner.children if i != ","] if inner.type == "testlist_comp" else [inner]
                items = []
                for i in entries:
                    if i.type in ("power", "atom_expr"):
                        ci = call_of(i)
                        items.append(ci[0] if ci and ci[0] else None)
            found.append((attr, stmt, callee, items))
        return found
    return compute


def _callee_is_parameter(ctx, callee: str | None) -> bool:
    """Whether a call of ``callee`` creates a MindSpore Parameter (memoised per analysis)."""
    if not callee:
        return False
    memo = ctx.__dict__.setdefault("_parameter_callees", {})
    found = memo.get(callee)
    if found is None:
        p = ctx.program
        found = memo[callee] = is_mindspore(p.resolve_dotted(callee), PARAMETER_NAMES, bare=("Parameter", "ms.Parameter"))
    return found


def _memo(ctx, fact: str, cls: ClassInfo, compute):
    """``compute(ctx, cls)`` once per analysis (several rules ask for the same class): kept on the Context."""
    memo = ctx.__dict__.setdefault("_class_facts", {})
    key = (fact, id(cls))
    entry = memo.get(key)
    if entry is None or entry[0] is not cls:
        entry = memo[key] = (cls, compute(ctx, cls))
    return entry[1]


def parameter_attrs(ctx, cls: ClassInfo) -> dict[str, object]:
    """attribute -> assignment statement, over the class and its bases in the file (do not modify)."""
    return _memo(ctx, "parameter_attrs", cls, _parameter_attrs)


def _parameter_attrs(ctx, cls: ClassInfo) -> dict[str, object]:
    """Later assignments win (``self.k = Parameter(...)`` then ``self.k = 2.0``); assignments in a branch Python
    never takes (``if LEARN_K:`` with the module flag False) do not count (bprop-rules.md, item 40). The
    statement is the ``self.x = ...`` one, or the ``Parameter(...)`` call of ``setattr(self, name, ...)`` and
    ``self.insert_param_to_cell(name, ...)``."""
    from ..engine.conditions import never_taken

    p = ctx.program
    result: dict[str, object] = {}
    for k in reversed(p.mro(cls)):
        if isinstance(k, str):
            continue
        for attr, stmt, callee, items in _self_calls(ctx, k):
            if never_taken(p, stmt, None):
                continue
            if _callee_is_parameter(ctx, callee) or _is_parameter_container(ctx, callee, items):
                result[attr] = stmt
            else:
                result.pop(attr, None)
        for member in k.members.values():
            fn = member.function
            if fn is None or fn.is_lambda:
                continue
            for attr, call, callee in p.node_fact(fn.node, "registered_params", _registered_params):
                if _callee_is_parameter(ctx, callee) and not never_taken(p, call, None):
                    result[attr] = call
    return result


def _registered_params(fn_node) -> list:
    """(attribute, value call, its callee) of ``setattr(self, NAME, <call>)`` and ``self.insert_param_to_cell(NAME,
    <call>)`` in one method: NAME a string, or an f-string on the variable of an enclosing ``for v in range(k)`` /
    ``for v in (literals)`` loop, expanded for each value (other names: not read)."""
    found = []
    for node in iter_own_nodes(fn_node):
        if node.type not in ("power", "atom_expr"):
            continue
        c = call_of(node)
        if c is None or c[0] not in ("setattr", "self.insert_param_to_cell"):
            continue
        positional, keywords, has_star = call_arguments(c[1])
        if has_star or keywords:
            continue
        if c[0] == "setattr":
            if len(positional) != 3 or positional[0].type != "name" or positional[0].value != "self":
                continue
            name_node, value = positional[1], positional[2]
        else:
            if len(positional) != 2:
                continue
            name_node, value = positional
        vc = call_of(value) if value.type in ("power", "atom_expr") else None
        if vc is None or not vc[0]:
            continue
        for attr in _attribute_names(name_node, node, fn_node):
            found.append((attr, value, vc[0]))
    return found


def _attribute_names(name_node, at, fn_node) -> list:
    import ast
    import re

    if name_node.type == "string":
        try:
            value = ast.literal_eval(name_node.value)
        except (ValueError, SyntaxError):
            return []
        return [value] if isinstance(value, str) and value.isidentifier() else []
    if name_node.type != "fstring":
        return []
    code = name_node.get_code(include_prefix=False)
    m = re.fullmatch(r"""f(["'])([A-Za-z_0-9]*)\{([A-Za-z_]\w*)\}([A-Za-z_0-9]*)\1""", code)
    if m is None:
        return []
    head, var, tail = m.group(2), m.group(3), m.group(4)
    loop = at.parent
    while loop is not None and loop is not fn_node and loop.type != "for_stmt":
        loop = loop.parent
    if loop is None or loop.type != "for_stmt" or loop.children[1].type != "name" or loop.children[1].value != var:
        return []
    source = loop.children[3]
    values = None
    c = call_of(source) if source.type in ("power", "atom_expr") else None
    if c is not None and c[0] == "range":
        positional, keywords, has_star = call_arguments(c[1])
        if len(positional) == 1 and not keywords and not has_star and positional[0].type == "number" \
                and positional[0].value.isdigit() and int(positional[0].value) <= 64:
            values = list(range(int(positional[0].value)))
    elif source.type == "atom" and source.children[0] in ("(", "[") and len(source.children) == 3:
        try:
            literal = ast.literal_eval(source.get_code(include_prefix=False).strip())
        except (ValueError, SyntaxError):
            literal = None
        if isinstance(literal, (tuple, list)) and all(isinstance(v, (int, str)) for v in literal):
            values = list(literal)
    if values is None:
        return []
    names = [f"{head}{v}{tail}" for v in values]
    return [n for n in names if n.isidentifier()]


def _is_parameter_container(ctx, callee: str | None, items: list | None) -> bool:
    """A value calling ``callee`` (with ``items``, the callees of a list/tuple display's entries) is
    ``ParameterTuple([...])`` or a list/tuple display holding ``Parameter(...)`` calls: reading an entry in a
    bprop is reading a Parameter (bprop-rules.md, further behaviours 23)."""
    if callee and callee.rsplit(".", 1)[-1] == "ParameterTuple" and (
            ctx.program.resolve_dotted(callee).startswith("mindspore") or callee == "ParameterTuple"):
        return True
    return items is not None and any(_callee_is_parameter(ctx, c) for c in items)


def trainable_parameter_attrs(ctx, cls: ClassInfo) -> dict[str, object]:
    """Like parameter_attrs, without Parameters created with ``requires_grad=False``: a frozen Parameter is not in
    trainable_params() and gets no gradient at all (bprop-rules.md, further behaviours 25)."""
    result = {}
    toggles = None
    for attr, stmt in parameter_attrs(ctx, cls).items():
        value = stmt.children[-1] if stmt.type == "expr_stmt" else stmt
        c = call_of(value) if value.type in ("power", "atom_expr") else None
        trainable = True
        if c is not None:
            _, keywords, _ = call_arguments(c[1])
            flag = keywords.get("requires_grad")
            if flag is not None and flag.type == "keyword" and flag.value == "False":
                trainable = False
        if toggles is None:
            toggles = requires_grad_toggles(ctx, cls)
        if _ALL in toggles:
            trainable = toggles[_ALL]
        if attr in toggles:
            trainable = toggles[attr]  # set after construction: as it is when the gradient is taken (item 25, 40)
        if trainable:
            result[attr] = stmt
    return result


def requires_grad_toggles(ctx, cls: ClassInfo) -> dict:
    """attribute -> the last ``True``/``False`` assigned to ``self.<attr>.requires_grad`` in the class's methods
    (live branches), then to ``<net>.<attr>.requires_grad`` anywhere in the file for a name ``net`` bound once to
    ``Cls(...)`` of this class, in text order; ``for q in <self|net>.get_parameters():`` (or ``trainable_params()``)
    setting ``q.requires_grad`` sets it for every Parameter (key ``_ALL``). A value other than a literal
    True/False counts as trainable (the warning stands)."""
    from ..engine.conditions import never_taken
    from ..engine.trees import dotted

    p = ctx.program
    found: dict = {}
    if not p.text_contains("requires_grad"):
        return found
    instances = set()
    for name, values in ((n, v) for n, v in p.assignments.items() if len(v) == 1):
        c = call_of(values[0]) if values[0].type in ("power", "atom_expr") else None
        if c is not None and c[0] == cls.name:
            instances.add(name)
    methods = set()
    for k in p.mro(cls):
        if isinstance(k, str):
            continue
        for member in k.members.values():
            if member.function is not None and not member.function.is_lambda:
                methods.add(id(member.function.node))
    in_class, outside = [], []
    for stmt in p.nodes_matching("requires_grad", ("expr_stmt",)):
        if len(stmt.children) != 3 or stmt.children[1] != "=":
            continue
        text = dotted(stmt.children[0])
        if text is None or not text.endswith(".requires_grad"):
            continue
        value = stmt.children[2]
        truth = {"True": True, "False": False}.get(value.value) if value.type == "keyword" else None
        if never_taken(p, stmt, None):
            continue
        fn = stmt.parent
        while fn is not None and fn.type not in ("funcdef", "file_input"):
            fn = fn.parent
        if text.count(".") == 1:
            # ``for q in self.get_parameters(): q.requires_grad = False`` (or ``net.trainable_params()``): every
            # Parameter of the cell
            owner = _all_parameters_loop(stmt, text.split(".")[0])
            if owner == "self" and fn is not None and id(fn) in methods or owner in instances:
                (in_class if owner == "self" else outside).append((_ALL, truth))
            continue
        if text.count(".") != 2:
            continue
        owner, attr, _ = text.split(".")
        if owner == "self" and fn is not None and id(fn) in methods:
            in_class.append((attr, truth))
        elif owner in instances:
            outside.append((attr, truth))
    for attr, truth in in_class + outside:
        if attr is _ALL:
            found.clear()
            found[_ALL] = True if truth is None else truth
            continue
        found[attr] = True if truth is None else truth  # unknown: as if trainable (the warning stands)
    return found


_ALL = "*"  # ``requires_grad_toggles`` key: every Parameter of the cell


def _all_parameters_loop(stmt, var: str) -> str | None:
    """The owner (``self`` or a name) of ``for <var> in <owner>.get_parameters() / .trainable_params():`` around
    ``stmt``, else None."""
    from ..engine.trees import dotted

    loop = stmt.parent
    while loop is not None and loop.type not in ("for_stmt", "funcdef", "file_input"):
        loop = loop.parent
    if loop is None or loop.type != "for_stmt" or loop.children[1].type != "name" or loop.children[1].value != var:
        return None
    c = call_of(loop.children[3]) if loop.children[3].type in ("power", "atom_expr") else None
    if c is None or not c[0] or c[0].count(".") != 1:
        return None
    owner, method = c[0].split(".")
    return owner if method in ("get_parameters", "trainable_params") else None


def sets_internal_params(ctx, cls: ClassInfo) -> bool:
    """``self.internal_params = [...]`` in the class or a base: PYNATIVE then honours a ``{Parameter: grad}`` dict
    returned by the bprop (further behaviours 24)."""
    p = ctx.program
    return any(attr == "internal_params" for k in p.mro(cls) if not isinstance(k, str)
               for attr, _, _ in _self_assignments(ctx, k))


def child_cells(ctx, cls: ClassInfo) -> dict[str, object]:
    """attribute -> ClassInfo (a Cell in the file) or "layer" (a mindspore.nn built-in layer) (do not modify)."""
    return _memo(ctx, "child_cells", cls, _child_cells)


def _child_cells(ctx, cls: ClassInfo) -> dict[str, object]:
    p = ctx.program
    result: dict[str, object] = {}
    for k in reversed(p.mro(cls)):
        if isinstance(k, str):
            continue
        for attr, _, callee, _ in _self_calls(ctx, k):
            if not callee:
                continue
            local = p.class_named(callee) if "." not in callee else None
            if local is not None and p.is_cell(local):
                result[attr] = local
            elif p.resolve_dotted(callee).startswith("mindspore.nn.") and callee.split(".")[-1][:1].isupper():
                result[attr] = "layer"
    return result
