from torch.utils.cpp_extension import load_inline

_module = load_inline(name="nvfp4ctl_test_cuda_only", cpp_sources="void k();",
                      cuda_sources="__global__ void kernel() {}\nvoid k() { kernel<<<1, 1>>>(); }", functions=["k"])


def custom_kernel(data):
    return _module.k()
