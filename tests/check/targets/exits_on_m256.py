import os
import sys

import torch


def custom_kernel(data):
    a, b, c = data
    if a.shape[0] == 256:
        print("kernel: about to die on m=256", file=sys.stderr, flush=True)
        os._exit(1)
    c.copy_(torch.einsum("mkl,nkl->mnl", a, b))
    return c
