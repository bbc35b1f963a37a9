// Tensor checks every torch binding of kernels/common shares. Each failure raises one Python
// ValueError (std::invalid_argument) naming the tensor and what it should be.
#pragma once

#include <cuda_runtime.h>
#include <torch/extension.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {


std::string to_text(const char* text) { return text; }
std::string to_text(const std::string& text) { return text; }
std::string to_text(int64_t value) { return std::to_string(value); }
std::string to_text(int value) { return std::to_string(value); }
std::string to_text(at::ScalarType dtype) { return c10::toString(dtype); }
std::string to_text(const c10::Device& device) { return device.str(); }
std::string to_text(at::IntArrayRef values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + ")";
}

template <typename... Parts>
void require(bool ok, const Parts&... parts) {
  if (ok) return;
  std::string message;
  ((message += to_text(parts)), ...);
  throw std::invalid_argument(message);
}

void check_operand(const torch::Tensor& t, const char* name, at::ScalarType dtype, int64_t rows,
                   int64_t cols, int64_t batch) {
  require(t.is_cuda(), name, " must be a CUDA tensor, got ", t.device());
  require(t.scalar_type() == dtype, name, " must be ", dtype, ", got ", t.scalar_type());
  require(t.dim() == 3 && t.size(0) == rows && t.size(1) == cols && t.size(2) == batch, name,
          " must have shape (", rows, ", ", cols, ", ", batch, "), got ", t.sizes());
  require(t.stride(1) == 1 && t.stride(0) == cols && (batch == 1 || t.stride(2) == rows * cols),
          name, " must be K-major with the batch outermost (strides (", cols, ", 1, ", rows * cols,
          ")), got ", t.strides());
}

// TMA descriptors, bulk copies and 16-byte stores need a 16-byte aligned start: a view at an
// offset into its storage can break it, and the kernel could then only say "invalid argument".
void check_aligned(const torch::Tensor& t, const char* name) {
  const int64_t offset = int64_t(reinterpret_cast<uintptr_t>(t.data_ptr()) % 16);
  require(offset == 0, name, " must start at a 16-byte aligned address, got one ", offset,
          " bytes past it (a view at an offset into its storage?)");
}

void check_scales(const torch::Tensor& t, const char* name, int64_t rows, int64_t sf_k,
                  int64_t batch) {
  const int64_t rest_rows = (rows + 127) / 128, rest_k = (sf_k + 3) / 4;
  require(t.is_cuda(), name, " must be a CUDA tensor, got ", t.device());
  require(t.scalar_type() == at::kFloat8_e4m3fn, name, " must be float8_e4m3fn, got ",
          t.scalar_type());
  require(t.dim() == 6 && t.size(0) == 32 && t.size(1) == 4 && t.size(2) == rest_rows &&
              t.size(3) == 4 && t.size(4) == rest_k && t.size(5) == batch,
          name, " must be the permuted (32, 4, ", rest_rows, ", 4, ", rest_k, ", ", batch,
          ") scale tensor, got ", t.sizes());
  const std::vector<int64_t> expected = {16, 4, rest_k * 512, 1, 512, rest_rows * rest_k * 512};
  for (int d = 0; d < 6; ++d) {
    require(t.size(d) == 1 || t.stride(d) == expected[d], name,
            " must keep generate_input's permuted storage (strides ", at::IntArrayRef(expected),
            "), got ", t.strides());
  }
}

// Every tensor of a call on the GPU of `c` (scales included: a kernel reads them all on one GPU).
template <typename... Tensors>
void require_one_gpu(const torch::Tensor& c, const Tensors&... others) {
  require(((others.get_device() == c.get_device()) && ...), "all operands must be on one GPU (", c.device(), ")");
}

// The kernels launch on the current GPU; for one call it is the tensors' GPU, then the caller's
// again. A model split over GPUs calls with tensors on cuda:1 while cuda:0 is current, as torch's
// own operators allow. The CUDA runtime directly, not c10's CUDAGuard: that needs libc10_cuda,
// which a CPU-only torch build lacks.
class OnTensorsGpu {
 public:
  explicit OnTensorsGpu(const torch::Tensor& t) {
    const int device = t.get_device();
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) (void)cudaGetLastError();
    if (current == device) return;
    const cudaError_t err = cudaSetDevice(device);
    if (err != cudaSuccess) (void)cudaGetLastError();
    require(err == cudaSuccess, "cannot make ", t.device(), " current: ", cudaGetErrorString(err));
    previous_ = current;
  }
  ~OnTensorsGpu() {
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
  }
  OnTensorsGpu(const OnTensorsGpu&) = delete;
  OnTensorsGpu& operator=(const OnTensorsGpu&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace
