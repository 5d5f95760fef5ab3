"""What a file's imports call MindSpore's modules, for the code a fix writes (BP024, BP025)."""
from __future__ import annotations


def ops_name(ctx) -> str | None:
    """The name the file's imports give ``mindspore.ops`` (``ops``, ``ms.ops`` …), or None."""
    for name, full in ctx.program.imports.items():
        if full == "mindspore.ops":
            return name
    for name, full in ctx.program.imports.items():
        if full == "mindspore":
            return f"{name}.ops"
    return None
