"""Parsing with parso: error-tolerant, exact positions, and incremental when a cache key is given."""
from __future__ import annotations

import threading
from functools import lru_cache

import parso
from parso.python.tree import Module

_lock = threading.Lock()


@lru_cache(maxsize=1)
def grammar():
    return parso.load_grammar()


def parse(text: str, cache_key: str | None = None) -> Module:
    """Parse ``text``; with ``cache_key`` parso re-parses only what changed since the last call with that key.

    parso's diff cache is a module-level dict keyed by path, so parses sharing a key are serialised.
    """
    if cache_key is None:
        return grammar().parse(text, error_recovery=True)
    with _lock:
        return grammar().parse(text, error_recovery=True, diff_cache=True, path=cache_key, cache=False)


def forget(cache_key: str) -> None:
    """Drop parso's cached tree for ``cache_key`` (a closed document)."""
    from parso.cache import parser_cache

    with _lock:
        for per_grammar in parser_cache.values():
            per_grammar.pop(cache_key, None)


def syntax_errors(module: Module) -> list:
    return list(grammar().iter_errors(module))
