// Where one launch's time goes, CTA by CTA: the kernel marks each phase; only the timeline build
// (an experiment of benchmarks/sm90_experiments.h) records them, elsewhere a mark is nothing.
#pragma once

#include <cstdint>

#include "sm90_config.cuh"
#include "sm90_ptx.cuh"
#include "sm90_scheduler.cuh"  // linear_cta

namespace nvfp4_sm90 {

// Timeline (experiment TIMELINE, benchmarks/sm90_kernel.py timeline): per CTA, the global timer (ns) at each phase; the host copies it
// out after a launch with nvfp4_sm90_timeline.
enum TimelineEvent {
  kEntry,            // thread 0 starts
  kBarriersReady,    // the producer thread: the barriers are initialised, before its first load
  kFirstIssued,      // the producer thread: the first stage's loads are issued
  kSetupDone,        // barriers initialised (shared A since v19: and this CTA's share of the copy written)
  kADecoded,         // shared A: every thread of this CTA decoded its share of A (v19: = kSetupDone)
  kArrived,          // shared A: the producer arrived at the launch-wide barrier
  kFlagsSeen,        // shared A: the producer warp saw every CTA's flag (before its proxy fence)
  kGridBarrierDone,  // shared A: the producer passed the launch-wide barrier
  kStageFull,        // math warp 0: the first stage is full
  kFirstTile,        // math warp 0: the first stage is full and (per-CTA A) its A is decoded
  kMainLoopDone,     // math warp 0: its last wgmma completed
  kPartialsSent,     // thread 0: its partials are stored
  kPartialsLanded,   // thread 0: the cluster barrier after the partials passed
  kExit,             // thread 0: C written
  kSmId,             // (not a time) the SM this CTA ran on
  kPreviousExit,     // (read at entry) the latest exit of the previous launch
  kTimelineEvents
};
#if NVFP4_SM90_EXPERIMENT(TIMELINE)
constexpr int kTimelineMaxCtas = 1024;
__device__ uint64_t g_timeline[kTimelineMaxCtas][kTimelineEvents];
__device__ uint64_t g_timeline_last_exit;
#endif

__device__ __forceinline__ void timeline_mark(TimelineEvent event) {
#if NVFP4_SM90_EXPERIMENT(TIMELINE)
  const uint32_t cta = linear_cta();
  if (cta >= kTimelineMaxCtas) return;
  uint64_t value = sm90::global_timer_ns();
  if (event == kSmId) asm volatile("{ .reg .u32 id; mov.u32 id, %%smid; cvt.u64.u32 %0, id; }" : "=l"(value));
  if (event == kPreviousExit) value = *reinterpret_cast<volatile uint64_t*>(&g_timeline_last_exit);
  g_timeline[cta][event] = value;
  if (event == kExit) atomicMax(reinterpret_cast<unsigned long long*>(&g_timeline_last_exit), value);
#else
  (void)event;
#endif
}

// A mark that a persistent CTA reaches once per tile: only the first time in this launch counts.
__device__ __forceinline__ void timeline_mark_first(TimelineEvent event) {
#if NVFP4_SM90_EXPERIMENT(TIMELINE)
  const uint32_t cta = linear_cta();
  if (cta < kTimelineMaxCtas && g_timeline[cta][event] >= g_timeline[cta][kEntry]) return;
#endif
  timeline_mark(event);
}

}  // namespace nvfp4_sm90
