"""The rule registry: one module per rule, in code order."""
from __future__ import annotations

from .base import Rule
from .bp001_missing_params import MissingParams

RULE_CLASSES: tuple[type[Rule], ...] = (
    MissingParams,
)
ALL_RULES: tuple[Rule, ...] = tuple(cls() for cls in RULE_CLASSES)
RULES_BY_CODE: dict[str, Rule] = {r.code: r for r in ALL_RULES}
