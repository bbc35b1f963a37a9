"""Stands in for torch.utils.cpp_extension where it finds no CUDA toolkit (or torch has no CUDA)."""


def load_inline(**_: object) -> None:
    raise OSError("CUDA_HOME environment variable is not set. Please set it to your CUDA install root.")
