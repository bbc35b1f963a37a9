"""A submission whose CUDA is a plain CUDA-core GEMV (FFMA, no tensor-core op), and the SASS a stand-in
dump of it gives: what the tests of build's problem-aware tensor-op check compile."""

SUB_CUDA = '''from torch.utils.cpp_extension import load_inline
CUDA = r"""__global__ void gemv(const float* a, const float* b, float* c, int k) {
  float sum = 0.f;
  for (int i = 0; i < k; ++i) sum += a[blockIdx.x * k + i] * b[i];
  c[blockIdx.x] = sum;
}"""
gemv = load_inline(name="gemv", cpp_sources="", cuda_sources=CUDA,
                   extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])
'''
FFMA_SASS = "        /*0080*/                   FFMA R4, R2, R3, R4 ;\n"
