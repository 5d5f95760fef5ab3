"""Test programs of many small Cells with a custom bprop (``MulAdd0``, ``MulAdd1`` …): ``BAD``'s bprop lacks ``dout``
(one BP001 with a fix per Cell), ``GOOD``'s is right. Shared by the server tests and scripts/bench_fix_checks.py."""

BAD = """class MulAdd{i}(nn.Cell):
    def construct(self, x, y):
        return 2 * x + y
    def bprop(self, x, y, out):
        return 2 * out, out
"""
GOOD = BAD.replace("def bprop(self, x, y, out):", "def bprop(self, x, y, out, dout):").replace(
    "return 2 * out, out", "return 2 * dout, dout")


def program(template: str, n: int, start: int = 0) -> str:
    """A file of ``n`` Cells of ``template`` (numbered from ``start``)."""
    return "from mindspore import nn\n" + "".join(template.format(i=i) for i in range(start, start + n))
