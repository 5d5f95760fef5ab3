# A PyTorch habit: backward(ctx, grad_output). MindSpore passes the forward inputs, out and dout.
import mindspore as ms
from mindspore import nn


class GradReverse(nn.Cell):
    """Gradient reversal layer (DANN)."""

    def __init__(self, lambd=1.0):
        super().__init__()
        self.lambd = lambd

    def construct(self, x):
        return x

    def bprop(self, grad_output):
        return (-self.lambd * grad_output,)
