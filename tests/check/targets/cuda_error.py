def custom_kernel(data):
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
