"""The language server with BP001 made endlessly slow inside fix re-checks (``want_fixes`` off): each Cell it visits
there takes 20 ms, and it revisits the Cells for ever (one check never ends by itself). Every re-check's start and
end is appended to the file named by ``BPROP_TEST_CHECKS``."""
import os
import sys
import time

from bprop_lsp import rules


class EndlesslySlowInChecks:
    def __init__(self, rule):
        self.rule = rule

    def __getattr__(self, name):
        return getattr(self.rule, name)

    def check(self, ctx):
        if ctx.want_fixes:  # the document's own analysis: as usual
            yield from self.rule.check(ctx)
            return
        with open(os.environ["BPROP_TEST_CHECKS"], "a", encoding="utf-8") as fh:
            fh.write("start\n")
        try:
            while True:
                for _site in ctx.cell_sites:
                    time.sleep(0.02)
        finally:
            with open(os.environ["BPROP_TEST_CHECKS"], "a", encoding="utf-8") as fh:
                fh.write("end\n")


rules.ALL_RULES = tuple(EndlesslySlowInChecks(r) if r.code == "BP001" else r for r in rules.ALL_RULES)

if __name__ == "__main__":
    from bprop_lsp.cli.main import main

    sys.argv = ["bprop-lsp", "serve"]
    sys.exit(main())
