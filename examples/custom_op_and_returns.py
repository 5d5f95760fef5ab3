# ops.Custom with a bprop that forgets dout, and a Cell whose bprop returns a list.
import numpy as np
from mindspore import nn, ops


def gelu_np(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def gelu_bprop(x, out):
    return (out * 0 + 1,)


class Gelu(nn.Cell):
    def __init__(self):
        super().__init__()
        self.gelu = ops.Custom(gelu_np, out_shape=lambda s: s, out_dtype=lambda t: t,
                               func_type="pyfunc", bprop=gelu_bprop)

    def construct(self, x):
        return self.gelu(x)


class Mul(nn.Cell):
    def construct(self, a, b):
        return a * b

    def bprop(self, a, b, out, dout):
        return [dout * b, dout * a]
