"""The pure analysis core: text in, findings (with exact spans and fixes) out. No LSP types.

    from bprop_lsp.engine import analyze, Settings
    result = analyze(source_text, Settings(mode="auto"))
    result.findings   # list[Finding], sorted by position
    result.bprops     # list[BpropInfo], every custom bprop the engine recognised (hover, inlay hints)
    result.skeletons  # list[Skeleton], Cells that could take a custom bprop (a code action)

    session = DocumentSession()   # what an editor keeps per open document (see session.py)
"""
from .analysis import Analysis, BpropInfo, Hint, Skeleton, analyze
from .fixes import apply_fix, fix_all
from .model import Applicability, Edit, Finding, Fix, Position, Related, Severity, Span
from .session import DocumentSession
from .settings import Settings
from .text import LineIndex, apply_edits

__all__ = [
    "Analysis", "Applicability", "BpropInfo", "DocumentSession", "Edit", "Hint", "Skeleton", "Finding", "Fix", "LineIndex", "Position",
    "Related", "Settings", "Severity", "Span", "analyze", "apply_edits", "apply_fix", "fix_all", "warm_up",
]


def warm_up() -> None:
    """Load what the first analysis needs (the rules, parso's grammar) ahead of it."""
    from ..rules import ALL_RULES  # noqa: F401
    from .parsing import grammar

    grammar()
