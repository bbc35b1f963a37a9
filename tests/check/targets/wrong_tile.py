import torch


def custom_kernel(data):
    a, b, c = data
    c.copy_(torch.einsum("mkl,nkl->mnl", a, b))
    c[128:256, 128:256, :] += 1  # one wrong 128x128 tile: m tile 1, n tile 1
    return c
