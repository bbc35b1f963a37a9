// Per-GPU host state for the sm_90a and sm_100a kernels' host planners: this GPU's index and SM
// count, and a slot per GPU for settings made once per GPU. A process may drive several GPUs (a
// model split over them); cudaFuncSetAttribute and occupancy answers belong to one GPU's context,
// so a value cached for GPU 0 must not be used on GPU 1. Internal linkage, as in
// tensor_map_encoder.cuh: each loaded module keeps its own.
#pragma once

#include <cuda_runtime.h>

namespace host_common {
namespace {

constexpr int kMaxCachedDevices = 64;  // GPUs past these are asked again on every call

// The current GPU's index, -1 if the query fails.
int current_device() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return device;
}

int slot_of(int device) { return device >= 0 && device < kMaxCachedDevices ? device : -1; }

// A launch asks the runtime for its GPU once (cudaGetDevice: 40-70 ns of CPU on an H100 host, where
// a whole call costs about 8 us): every per-GPU lookup inside the scope reads this slot. Not
// thread-safe, like the rest of this host state: one launch at a time per module.
constexpr int kNoLaunch = -2;
int launch_slot = kNoLaunch;

class OnLaunchGpu {
 public:
  OnLaunchGpu() : saved_(launch_slot) { launch_slot = slot_of(current_device()); }
  ~OnLaunchGpu() { launch_slot = saved_; }
  OnLaunchGpu(const OnLaunchGpu&) = delete;
  OnLaunchGpu& operator=(const OnLaunchGpu&) = delete;

 private:
  int saved_;
};

// The slot of the current GPU in a per-GPU table of kMaxCachedDevices entries; -1 where there is none.
int device_slot() { return launch_slot != kNoLaunch ? launch_slot : slot_of(current_device()); }

// One State per GPU, default-made on first use; a GPU without a slot gets a fresh one on every call.
template <class State>
State& per_device(State (&table)[kMaxCachedDevices], State& scratch) {
  const int slot = device_slot();
  if (slot >= 0) return table[slot];
  scratch = State{};
  return scratch;
}

int sm_count_cached[kMaxCachedDevices] = {};  // a device property, not a result; 0: not asked yet
int sm_count_scratch = 0;

// This GPU's number of SMs, 0 if the query fails.
int sm_count() {
  int& cached = per_device(sm_count_cached, sm_count_scratch);
  if (cached == 0) {
    const int device = current_device();
    if (device < 0 || cudaDeviceGetAttribute(&cached, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      (void)cudaGetLastError();
      cached = 0;
    }
  }
  return cached;
}

}  // namespace
}  // namespace host_common
