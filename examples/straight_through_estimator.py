# A correct custom bprop: nothing to report.
from mindspore import nn, ops


class FakeQuant(nn.Cell):
    def __init__(self, num_bits=4, qmin=-1.0, qmax=1.0):
        super().__init__()
        self.levels = 2 ** num_bits - 1
        self.qmin = qmin
        self.qmax = qmax

    def construct(self, x):
        x = ops.clip_by_value(x, self.qmin, self.qmax)
        scale = (self.qmax - self.qmin) / self.levels
        return ops.round((x - self.qmin) / scale) * scale + self.qmin

    def bprop(self, x, out, dout):
        keep = ops.logical_and(x >= self.qmin, x <= self.qmax)
        return (dout * keep.astype(dout.dtype),)
