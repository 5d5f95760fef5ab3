"""BP900: a ``# noqa: BPxxx`` that names no rule (``BP0O1``) or suppresses nothing (ruff's RUF100).

The engine applies ``# noqa`` and knows what each comment suppressed: a rule with ``reviews_noqa`` is handed the
comments (``engine.noqa.NoqaDirective``) after the other rules ran, instead of looking at the file itself.
Unknown codes are reported always; an unused one only for a rule that is enabled and did not fire there. Codes of
other tools (``E501``, ``BLE001``) and a bare ``# noqa`` are left alone.
"""
from __future__ import annotations

import re
from typing import Iterator

from ..engine.model import Edit, Fix
from .base import NEVER, Draft, Invalid, Rule, Valid, example

# One of our codes or a look-alike: BP, then letters and digits with at least one digit ("BP0O1", "BPOO1").
_OURS = re.compile(r"^[Bb][Pp](?=[0-9A-Za-z]*[0-9])[0-9A-Za-z]+$")


class UnusedNoqa(Rule):
    code = "BP900"
    name = "bprop-unused-noqa"
    summary = "A `# noqa` names a bprop-lsp code that does not exist, or that suppresses nothing on its line."
    mindspore_says = "Nothing: a comment. The mistake is ours: a typo in a code silences nothing."
    fix_title = "Remove the unknown and unused codes from the noqa comment (the comment, when no code is left)"
    reviews_noqa = True
    valid = (
        Valid(example("""
            from mindspore import nn

            class MulAdd(nn.Cell):
                def construct(self, x, y):
                    return 2 * x + y
                def bprop(self, x, y, out):  # noqa: BP001
                    return 2 * out, out
            """), "the code suppresses a finding on its line"),
        Valid(example("""
            from mindspore import nn

            class Net(nn.Cell):
                def construct(self, x):
                    return x
                def bprop(self, x, out, dout):  # noqa: E501, BLE001
                    return (dout,)
            """), "other tools' codes are theirs to review"),
    )
    invalid = (
        Invalid(example("""
            from mindspore import nn

            class MulAdd(nn.Cell):
                def construct(self, x, y):
                    return 2 * x + y
                def bprop(self, x, y, out, dout):  # noqa: BP0O1
                    return 2 * dout, dout
            """), fixed=example("""
            from mindspore import nn

            class MulAdd(nn.Cell):
                def construct(self, x, y):
                    return 2 * x + y
                def bprop(self, x, y, out, dout):
                    return 2 * dout, dout
            """), note="an unknown code (a letter O for a zero)",
                at="6:48", message=("noqa comment with codes that silence nothing (unknown: `BP0O1` (did you mean "
                                    "BP001?))")),
        Invalid(example("""
            from mindspore import nn

            class Net(nn.Cell):
                def construct(self, x):
                    return x
                def bprop(self, x, out, dout):  # noqa: BP020, E501
                    return (dout,)
            """), fixed=example("""
            from mindspore import nn

            class Net(nn.Cell):
                def construct(self, x):
                    return x
                def bprop(self, x, out, dout):  # noqa: E501
                    return (dout,)
            """), note="BP020 does not fire here",
                at="6:45", message="noqa comment with codes that silence nothing (unused: `BP020`)"),
    )

    def check(self, ctx) -> Iterator[Draft]:
        return iter(())  # (the engine hands this rule the noqa comments: review_noqa)

    def review_noqa(self, ctx, directives, known: set[str], enabled: set[str]) -> Iterator[Draft]:
        """One finding per comment (as ruff's RUF100), naming every unknown and unused code in it; its fix drops
        them all (the whole comment when no code is left)."""
        from ..engine.model import Span
        from ..engine.settings import suggest

        names = {code: code for code in known}
        for d in directives:
            unknown, unused = [], []
            for entry in d.codes:
                code = entry.code.upper()
                if not _OURS.match(entry.code) or code == self.code:
                    continue
                if code not in known:
                    near = suggest(entry.code, names)
                    unknown.append((entry, f"`{entry.code}`" + (f" (did you mean {' or '.join(near)}?)" if near else "")))
                elif code in enabled and code not in d.used:
                    unused.append((entry, f"`{entry.code}`"))
            if not unknown and not unused:
                continue
            parts = []
            if unknown:
                parts.append(f"unknown: {', '.join(t for _, t in unknown)}")
            if unused:
                parts.append(f"unused: {', '.join(t for _, t in unused)}")
            bad = {id(e) for e, _ in unknown + unused}
            kept = [e.code for e in d.codes if id(e) not in bad]
            first, last = d.codes[0], d.codes[-1]
            if kept:
                edit = Edit(Span(first.span.start, last.span.end), ", ".join(kept))
            else:
                edit = Edit(d.span, "")
            flagged = [e for e in d.codes if id(e) in bad]
            yield Draft(Span(flagged[0].span.start, flagged[-1].span.end),
                        f"noqa comment with codes that silence nothing ({'; '.join(parts)})",
                        fails_in=NEVER, fix=Fix(self.fix_title, (edit,)))
