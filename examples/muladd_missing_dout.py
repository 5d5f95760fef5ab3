# The seed program from the MindSpore FAQ: the custom bprop forgets `dout`.
# MindSpore only says so when it compiles the graph:
#   TypeError: The params of function 'bprop' of Primitive or Cell requires the forward inputs as well as the 'out' and 'dout'.
from mindspore import nn


class MulAdd(nn.Cell):
    def construct(self, x, y):
        return 2 * x + y

    def bprop(self, x, y, out):
        return 2 * out, out
