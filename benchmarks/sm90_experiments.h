// Experiments on the sm_90a NVFP4 kernel: earlier versions' algorithms, ablations (one stage left
// out to measure its cost; results are then wrong) and the timeline build. Benchmark-only:
// benchmarks/sm90_kernel.py force-includes this file (nvcc -include) into its variant builds and
// sets one or more switches with -D; the shipped build (nvfp4ctl build / check / bench / export)
// never sees it, so there every NVFP4_SM90_EXPERIMENT(name) of kernels/sm90/ is 0.
//
// A switch NAME is read by the kernel as NVFP4_SM90_EXPERIMENT(NAME), which expands to
// NVFP4_SM90_NAME here; every switch is 0 unless set. Tunable settings (stages, split-K, shared-A
// thresholds, ...) are knobs, declared in kernels/sm90/sm90_config.cuh, not here.
#pragma once

#define NVFP4_SM90_EXPERIMENTS 1

// ---- Earlier versions ----
#ifndef NVFP4_SM90_V1_TILE_WAIT  // 1: v1's main loop: decode a whole tile, issue its 8 wgmmas, wait for all of them
#define NVFP4_SM90_V1_TILE_WAIT 0
#endif
#ifndef NVFP4_SM90_PRMT_DECODE  // 1: v1-v7's prmt-table decode (exact values) instead of e4m3 placement + cvt (v8)
#define NVFP4_SM90_PRMT_DECODE 0
#endif
#ifndef NVFP4_SM90_UNSTAGED_A_STORES  // 1: the shared-A copy written 16 bytes per lane every 64 (before v9)
#define NVFP4_SM90_UNSTAGED_A_STORES 0
#endif

#ifndef NVFP4_SM90_LATE_MAP_PREFETCH  // 1: the TMA descriptors prefetched after the barrier init, not before (v12)
#define NVFP4_SM90_LATE_MAP_PREFETCH 0
#endif
#ifndef NVFP4_SM90_LATE_FIRST_LOADS  // 1: thread 0 initialises the barriers, the first loads wait for the CTA-wide sync (v12)
#define NVFP4_SM90_LATE_FIRST_LOADS 0
#endif
#ifndef NVFP4_SM90_SHARED_A_ONLY_SOFT_SPLIT  // 1: per-CTA A splits only in hardware clusters (before v13)
#define NVFP4_SM90_SHARED_A_ONLY_SOFT_SPLIT 0
#endif
#ifndef NVFP4_SM90_NO_DIRECT  // 1: the direct kernel never runs, whatever the dispatch table says (before v15)
#define NVFP4_SM90_NO_DIRECT 0
#endif
#ifndef NVFP4_SM90_DIRECT_TWO_CTAS_PER_SM  // 1: the direct kernel's 32-row warps without the 3-CTAs-per-SM register bound
#define NVFP4_SM90_DIRECT_TWO_CTAS_PER_SM 0
#endif
#ifndef NVFP4_SM90_PERSISTENT_SWEEPS_ONLY  // 1: persistent launches cut every tile into parts, none run whole first (before v16)
#define NVFP4_SM90_PERSISTENT_SWEEPS_ONLY 0
#endif
#ifndef NVFP4_SM90_PERSISTENT_PARTS_AFTER_WHOLE  // 1: a persistent CTA runs its parts of split tiles after its whole tiles (v16)
#define NVFP4_SM90_PERSISTENT_PARTS_AFTER_WHOLE 0
#endif
#ifndef NVFP4_SM90_PERSISTENT_EVEN_PARTS  // 1: a split tile's owner part as long as the others (v16)
#define NVFP4_SM90_PERSISTENT_EVEN_PARTS 0
#endif
#ifndef NVFP4_SM90_LATE_A_COPY  // 1: the shared-A copy starts after the setup's CTA-wide sync, every thread takes items (v18)
#define NVFP4_SM90_LATE_A_COPY 0
#endif
#ifndef NVFP4_SM90_LATE_GRID_WAIT  // 1: the producer warp polls the launch-wide barrier only after the local A decode (v18)
#define NVFP4_SM90_LATE_GRID_WAIT 0
#endif
#ifndef NVFP4_SM90_RELAXED_POLLS  // 1: flags polled with relaxed loads and one acquire fence once all are seen
#define NVFP4_SM90_RELAXED_POLLS 0
#endif
#ifndef NVFP4_SM90_SPAN_ONE_M_TILE  // 1: the spanning split only where the launch has one M tile (before v14)
#define NVFP4_SM90_SPAN_ONE_M_TILE 0
#endif
// ---- Ablations: one stage left out (the results are wrong) ----
#ifndef NVFP4_SM90_ABLATE_A_DECODE  // 1: A stages are not decoded (per-CTA A and local A)
#define NVFP4_SM90_ABLATE_A_DECODE 0
#endif
#ifndef NVFP4_SM90_ABLATE_B_DECODE  // 1: B fragments are masked words, not decoded values
#define NVFP4_SM90_ABLATE_B_DECODE 0
#endif
#ifndef NVFP4_SM90_ABLATE_MMA  // 1: no wgmma; one dependent add per k-step keeps the decode alive
#define NVFP4_SM90_ABLATE_MMA 0
#endif
#ifndef NVFP4_SM90_ABLATE_EXCHANGE  // 1: no split-K partials sent (measures the exchange)
#define NVFP4_SM90_ABLATE_EXCHANGE 0
#endif
#ifndef NVFP4_SM90_ABLATE_SHARED_A_DECODE  // 1: shared A without decoding it (launch-wide barrier kept)
#define NVFP4_SM90_ABLATE_SHARED_A_DECODE 0
#endif
#ifndef NVFP4_SM90_ABLATE_GRID_BARRIER  // 1: shared A without its decode or the launch-wide barrier
#define NVFP4_SM90_ABLATE_GRID_BARRIER 0
#endif
#ifndef NVFP4_SM90_ABLATE_A16_LOADS  // 1: shared A's fp16 slices are not loaded per K tile (each stage keeps what it holds)
#define NVFP4_SM90_ABLATE_A16_LOADS 0
#endif
#ifndef NVFP4_SM90_ABLATE_PIPELINE  // 1: no loads, decode or MMA; setup and split-K epilogue only
#define NVFP4_SM90_ABLATE_PIPELINE 0
#endif
#ifndef NVFP4_SM90_ABLATE_PERSISTENT_C  // 1: a persistent launch's units store no C and exchange no parts
#define NVFP4_SM90_ABLATE_PERSISTENT_C 0
#endif
#ifndef NVFP4_SM90_ABLATE_ALL  // 1: the kernel returns at once (launch and scheduling cost of this configuration)
#define NVFP4_SM90_ABLATE_ALL 0
#endif

// ---- Instrumentation ----
#ifndef NVFP4_SM90_TIMELINE  // 1: every CTA records when it reaches each phase (benchmarks/sm90_kernel.py timeline)
#define NVFP4_SM90_TIMELINE 0
#endif

// v1's tile-wait loop exists for the per-CTA A path only: it switches the shared-A knob's default off.
#if NVFP4_SM90_V1_TILE_WAIT && !defined(NVFP4_SM90_SHARED_A)
#define NVFP4_SM90_SHARED_A 0
#endif
