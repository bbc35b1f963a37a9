from torch_stub.cpp_extension import load_inline

_module = load_inline(name="gemm", cpp_sources="", cuda_sources="__global__ void k() {}", functions=["k"])


def custom_kernel(data):
    return _module.k(data)
