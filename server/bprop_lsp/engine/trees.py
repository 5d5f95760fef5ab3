"""Helpers over parso's tree: dotted names, calls and their arguments, scopes, walks, displays, and the code
(and identifiers) of a top-level statement kept with its facts.

Nothing here knows Python's semantics beyond the shape of the tree, nor MindSpore: the Python model
(``definitions.py``, ``program.py``) and the rules read the tree through these.
"""
from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from typing import Iterator

from parso.python import tree

# Runs of identifier characters (``\w`` is exactly ``program._is_ident_char``).
WORD = re.compile(r"\w+")


def statement_code(facts: dict, top) -> str:
    """A top-level statement's code (its prefix included), read once and kept with its facts."""
    code = facts.get("code")
    if code is None:
        code = facts["code"] = top.get_code()
    return code


def statement_words(facts: dict, top) -> frozenset:
    """The identifiers in a top-level statement's code, kept with its facts. (Interned: the same identifiers recur
    in every statement and every document.)"""
    words = facts.get("words")
    if words is None:
        words = facts["words"] = frozenset(map(sys.intern, WORD.findall(statement_code(facts, top))))
    return words


def string_value(node) -> str | None:
    """The value of a string literal that is an identifier (a class or attribute name), else None."""
    if node.type != "string":
        return None
    try:
        value = ast.literal_eval(node.value)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) and value.isidentifier() else None


def dotted(node) -> str | None:
    """``a.b.c`` for a Name/attribute chain (calls stripped: ``ms.jit(...)`` → ``ms.jit``), else None."""
    if node is None:
        return None
    if node.type == "name":
        return node.value
    if node.type in ("power", "atom_expr"):
        parts = []
        children = node.children
        if children[0] == "await":
            return None
        first = children[0]
        if first.type != "name":
            return None
        parts.append(first.value)
        for trailer in children[1:]:
            if trailer.type != "trailer":
                return None
            if trailer.children[0] == ".":
                parts.append(trailer.children[1].value)
            elif trailer.children[0] == "(" and trailer is children[-1]:
                break
            else:
                return None
        return ".".join(parts)
    if node.type == "dotted_name":
        return "".join(c.value for c in node.children)
    return None


def scope_of(node):
    """The function, lambda, class or module whose scope ``node`` is in."""
    parent = node.parent
    while parent is not None and parent.type not in ("funcdef", "classdef", "file_input", "lambdef"):
        parent = parent.parent
    return parent


def unwrap_parens(node):
    """``((x))`` -> ``x`` (a parenthesised tuple display stays as it is)."""
    while node.type == "atom" and node.children[0] == "(" and len(node.children) == 3 and node.children[1].type != "testlist_comp":
        node = node.children[1]
    return node


def is_within(outer, node) -> bool:
    """Whether ``node`` is ``outer`` or lies inside it."""
    while node is not None:
        if node is outer:
            return True
        node = node.parent
    return False


def iter_scope_nodes(node) -> Iterator:
    """Every node below ``node`` (depth first)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        children = getattr(n, "children", None)
        if children:
            stack.extend(reversed(children))


def iter_own_nodes(function_node) -> Iterator:
    """Nodes of a function body, not descending into nested functions, lambdas or classes."""
    stack = list(reversed(function_node.children[-1].children)) if hasattr(function_node.children[-1], "children") else [function_node.children[-1]]
    while stack:
        n = stack.pop()
        yield n
        if n.type in ("funcdef", "lambdef", "classdef", "async_funcdef"):
            continue
        children = getattr(n, "children", None)
        if children:
            stack.extend(reversed(children))


def call_of(node):
    """(callee dotted name, arglist trailer) if ``node`` is a call ``f(...)``, else None."""
    if node.type not in ("power", "atom_expr"):
        return None
    last = node.children[-1]
    if last.type != "trailer" or last.children[0] != "(":
        return None
    callee = dotted(callee_of(node))
    return callee, last


def callee_of(node):
    """The expression a call node calls: all its trailers but the last (a light view when several remain)."""
    children = node.children[:-1]
    if len(children) == 1:
        return children[0]
    # Rebuild a light-weight view: dotted() only reads .type/.children.
    return NodeView(node.type, children)


@dataclass
class NodeView:
    """Some of a node's children seen as a node of its type: what ``dotted``/``call_of`` read (``.type``,
    ``.children``). ``a.b(x)`` without its call is ``a.b``; ``Cls(a)(x)`` without the last call is ``Cls(a)``."""

    type: str
    children: list


def call_arguments(trailer) -> tuple[list, dict[str, tree.BaseNode], bool]:
    """(positional args, keyword args, has_star) of a call trailer ``( ... )``."""
    positional: list = []
    keywords: dict = {}
    has_star = False
    if len(trailer.children) < 3:
        return positional, keywords, has_star
    inner = trailer.children[1]
    items = [c for c in inner.children if not (c.type == "operator" and c.value == ",")] if inner.type == "arglist" else [inner]
    for item in items:
        if item.type == "argument":
            if item.children[0] in ("*", "**"):
                has_star = True
            elif len(item.children) >= 3 and item.children[1] == "=":
                if item.children[0].type == "name":  # error recovery also reads ``a.b=1`` as an argument
                    keywords[item.children[0].value] = item.children[2]
            else:
                positional.append(item)  # generator argument
        elif item.type == "operator":
            continue
        else:
            positional.append(item)
    return positional, keywords, has_star


def display_items(node) -> list | None:
    """Items of a tuple/list display ``(a, b)`` / ``(a,)`` / ``[a]``."""
    if node.type != "atom" or node.children[0] not in ("(", "[") or len(node.children) != 3:
        return None
    inner = node.children[1]
    if inner.type == "testlist_comp":
        if any(c.type in ("comp_for", "sync_comp_for") for c in inner.children):
            return None
        return [c for c in inner.children if c != ","]
    return [inner] if node.children[0] == "[" else None


def dict_items(node) -> list | None:
    """(key, value) pairs of a dict display ``{"k": v, ...}``; None for anything else (``**spread`` included)."""
    if node.type != "atom" or node.children[0] != "{":
        return None
    if len(node.children) == 2:
        return []
    inner = node.children[1]
    if inner.type != "dictorsetmaker":
        return None
    children = [c for c in inner.children if c != ","]
    if any(c == "**" for c in inner.children) or len(children) % 3:
        return None
    return [(children[i], children[i + 2]) for i in range(0, len(children), 3) if children[i + 1] == ":"]


def is_module_level(node) -> bool:
    """Whether ``node`` runs at module level (not in a function, class or lambda body)."""
    parent = node.parent
    while parent is not None:
        if parent.type in ("funcdef", "classdef", "lambdef"):
            return False
        if parent.type == "file_input":
            return True
        parent = parent.parent
    return False



def decorators_of(funcdef) -> list:
    """The decorator nodes of a ``def`` or ``class`` (none when it is not decorated)."""
    parent = funcdef.parent
    if parent is not None and parent.type == "decorated":
        dec = parent.children[0]
        if dec.type == "decorator":
            return [dec]
        if dec.type == "decorators":
            return list(dec.children)
    return []
