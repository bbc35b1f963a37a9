// Dispatch table of the sm_90a NVFP4 GEMM, written by `nvfp4ctl tune` (nvfp4ctl/tune/table.py; the
// per-shape entries through nvfp4ctl.build.knobs.write_dispatch). Two machine-edited blocks:
//
// Kernel set: scope=kernel knobs (stages, buffers, ...) change device code for every shape, so a
// tune picks one value each (best geomean over its shapes). Those that differ from the declared
// default sit between the kernel-knobs markers as `#ifndef NAME / #define NAME value / #endif`;
// sm90_config.cuh includes this file before its own defaults, so these win over them and `-D`
// still wins over both. Empty block: the declared defaults.
//
// Per-shape plan: scope=plan knobs (sm90_config.cuh) set for one problem shape, read by the host
// planner (sm90_plan.cuh, plan_knobs). A shape without an entry, or a knob without one, keeps the
// knob's compile-time value, so the empty table is the planner's own choice everywhere. Entries sit
// between the dispatch markers, one per line, exactly
//   {M, N, K, L, PlanKnob::NAME, VALUE},
// where NAME is a plan knob without its NVFP4_SM90_ prefix and VALUE one of its declared values.
// A value can only narrow what the build contains: e.g. ODD_SPLIT 1 for a shape has no effect in a
// build compiled with NVFP4_SM90_ODD_SPLIT=0, which has no 3-CTA kernels. A tune candidate is
// built with NVFP4CTL_TUNE defined: plan_knobs then ignores this table (the -D values decide).
#pragma once

// nvfp4ctl:kernel-knobs begin
// nvfp4ctl:kernel-knobs end

namespace nvfp4_sm90 {

enum class PlanKnob {
  MAX_CLUSTER_K,
  ODD_SPLIT,
  SOFT_SPLIT,
  SPAN,
  SPAN_CTAS,
  SPAN_MIN_GAIN,
  SHARED_A,
  SHARED_A_MIN_K_TILES,
  PERSISTENT,
  PERSISTENT_MAX_PARTS,
};

struct DispatchEntry {
  int m, n, k, l;
  PlanKnob knob;
  int value;
};

constexpr DispatchEntry kDispatchTable[] = {
    // nvfp4ctl:dispatch begin
    {128, 256, 256, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {128, 256, 256, 1, PlanKnob::ODD_SPLIT, 1},
    {128, 256, 256, 1, PlanKnob::PERSISTENT, 1},
    {128, 256, 256, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {128, 256, 256, 1, PlanKnob::SHARED_A, 1},
    {128, 256, 256, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {128, 256, 256, 1, PlanKnob::SOFT_SPLIT, 1},
    {128, 256, 256, 1, PlanKnob::SPAN, 1},
    {128, 256, 256, 1, PlanKnob::SPAN_CTAS, 0},
    {128, 256, 256, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {128, 1536, 7168, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {128, 1536, 7168, 1, PlanKnob::ODD_SPLIT, 1},
    {128, 1536, 7168, 1, PlanKnob::PERSISTENT, 1},
    {128, 1536, 7168, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {128, 1536, 7168, 1, PlanKnob::SHARED_A, 1},
    {128, 1536, 7168, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {128, 1536, 7168, 1, PlanKnob::SOFT_SPLIT, 1},
    {128, 1536, 7168, 1, PlanKnob::SPAN, 1},
    {128, 1536, 7168, 1, PlanKnob::SPAN_CTAS, 0},
    {128, 1536, 7168, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {128, 3072, 1536, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {128, 3072, 1536, 1, PlanKnob::ODD_SPLIT, 1},
    {128, 3072, 1536, 1, PlanKnob::PERSISTENT, 1},
    {128, 3072, 1536, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {128, 3072, 1536, 1, PlanKnob::SHARED_A, 1},
    {128, 3072, 1536, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {128, 3072, 1536, 1, PlanKnob::SOFT_SPLIT, 1},
    {128, 3072, 1536, 1, PlanKnob::SPAN, 1},
    {128, 3072, 1536, 1, PlanKnob::SPAN_CTAS, 0},
    {128, 3072, 1536, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {128, 4096, 7168, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {128, 4096, 7168, 1, PlanKnob::ODD_SPLIT, 1},
    {128, 4096, 7168, 1, PlanKnob::PERSISTENT, 1},
    {128, 4096, 7168, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {128, 4096, 7168, 1, PlanKnob::SHARED_A, 1},
    {128, 4096, 7168, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {128, 4096, 7168, 1, PlanKnob::SOFT_SPLIT, 1},
    {128, 4096, 7168, 1, PlanKnob::SPAN, 1},
    {128, 4096, 7168, 1, PlanKnob::SPAN_CTAS, 0},
    {128, 4096, 7168, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {128, 7168, 2048, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {128, 7168, 2048, 1, PlanKnob::ODD_SPLIT, 1},
    {128, 7168, 2048, 1, PlanKnob::PERSISTENT, 1},
    {128, 7168, 2048, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {128, 7168, 2048, 1, PlanKnob::SHARED_A, 1},
    {128, 7168, 2048, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {128, 7168, 2048, 1, PlanKnob::SOFT_SPLIT, 1},
    {128, 7168, 2048, 1, PlanKnob::SPAN, 1},
    {128, 7168, 2048, 1, PlanKnob::SPAN_CTAS, 0},
    {128, 7168, 2048, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {128, 7168, 16384, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {128, 7168, 16384, 1, PlanKnob::ODD_SPLIT, 1},
    {128, 7168, 16384, 1, PlanKnob::PERSISTENT, 1},
    {128, 7168, 16384, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {128, 7168, 16384, 1, PlanKnob::SHARED_A, 1},
    {128, 7168, 16384, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {128, 7168, 16384, 1, PlanKnob::SOFT_SPLIT, 1},
    {128, 7168, 16384, 1, PlanKnob::SPAN, 1},
    {128, 7168, 16384, 1, PlanKnob::SPAN_CTAS, 0},
    {128, 7168, 16384, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {256, 7168, 256, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {256, 7168, 256, 1, PlanKnob::ODD_SPLIT, 1},
    {256, 7168, 256, 1, PlanKnob::PERSISTENT, 1},
    {256, 7168, 256, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {256, 7168, 256, 1, PlanKnob::SHARED_A, 1},
    {256, 7168, 256, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {256, 7168, 256, 1, PlanKnob::SOFT_SPLIT, 1},
    {256, 7168, 256, 1, PlanKnob::SPAN, 1},
    {256, 7168, 256, 1, PlanKnob::SPAN_CTAS, 0},
    {256, 7168, 256, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {256, 7168, 2048, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {256, 7168, 2048, 1, PlanKnob::ODD_SPLIT, 1},
    {256, 7168, 2048, 1, PlanKnob::PERSISTENT, 1},
    {256, 7168, 2048, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {256, 7168, 2048, 1, PlanKnob::SHARED_A, 1},
    {256, 7168, 2048, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {256, 7168, 2048, 1, PlanKnob::SOFT_SPLIT, 1},
    {256, 7168, 2048, 1, PlanKnob::SPAN, 1},
    {256, 7168, 2048, 1, PlanKnob::SPAN_CTAS, 0},
    {256, 7168, 2048, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {384, 7168, 2304, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {384, 7168, 2304, 1, PlanKnob::ODD_SPLIT, 1},
    {384, 7168, 2304, 1, PlanKnob::PERSISTENT, 1},
    {384, 7168, 2304, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {384, 7168, 2304, 1, PlanKnob::SHARED_A, 1},
    {384, 7168, 2304, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {384, 7168, 2304, 1, PlanKnob::SOFT_SPLIT, 1},
    {384, 7168, 2304, 1, PlanKnob::SPAN, 1},
    {384, 7168, 2304, 1, PlanKnob::SPAN_CTAS, 0},
    {384, 7168, 2304, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {512, 512, 7168, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {512, 512, 7168, 1, PlanKnob::ODD_SPLIT, 1},
    {512, 512, 7168, 1, PlanKnob::PERSISTENT, 1},
    {512, 512, 7168, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {512, 512, 7168, 1, PlanKnob::SHARED_A, 0},
    {512, 512, 7168, 1, PlanKnob::SHARED_A_MIN_K_TILES, 1},
    {512, 512, 7168, 1, PlanKnob::SOFT_SPLIT, 1},
    {512, 512, 7168, 1, PlanKnob::SPAN, 1},
    {512, 512, 7168, 1, PlanKnob::SPAN_CTAS, 0},
    {512, 512, 7168, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {512, 1536, 7168, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {512, 1536, 7168, 1, PlanKnob::ODD_SPLIT, 1},
    {512, 1536, 7168, 1, PlanKnob::PERSISTENT, 1},
    {512, 1536, 7168, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {512, 1536, 7168, 1, PlanKnob::SHARED_A, 1},
    {512, 1536, 7168, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {512, 1536, 7168, 1, PlanKnob::SOFT_SPLIT, 1},
    {512, 1536, 7168, 1, PlanKnob::SPAN, 1},
    {512, 1536, 7168, 1, PlanKnob::SPAN_CTAS, 0},
    {512, 1536, 7168, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {512, 4096, 512, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {512, 4096, 512, 1, PlanKnob::ODD_SPLIT, 1},
    {512, 4096, 512, 1, PlanKnob::PERSISTENT, 1},
    {512, 4096, 512, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {512, 4096, 512, 1, PlanKnob::SHARED_A, 1},
    {512, 4096, 512, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {512, 4096, 512, 1, PlanKnob::SOFT_SPLIT, 1},
    {512, 4096, 512, 1, PlanKnob::SPAN, 1},
    {512, 4096, 512, 1, PlanKnob::SPAN_CTAS, 0},
    {512, 4096, 512, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    {2304, 4608, 7168, 1, PlanKnob::MAX_CLUSTER_K, 8},
    {2304, 4608, 7168, 1, PlanKnob::ODD_SPLIT, 1},
    {2304, 4608, 7168, 1, PlanKnob::PERSISTENT, 1},
    {2304, 4608, 7168, 1, PlanKnob::PERSISTENT_MAX_PARTS, 2},
    {2304, 4608, 7168, 1, PlanKnob::SHARED_A, 1},
    {2304, 4608, 7168, 1, PlanKnob::SHARED_A_MIN_K_TILES, 8},
    {2304, 4608, 7168, 1, PlanKnob::SOFT_SPLIT, 1},
    {2304, 4608, 7168, 1, PlanKnob::SPAN, 1},
    {2304, 4608, 7168, 1, PlanKnob::SPAN_CTAS, 0},
    {2304, 4608, 7168, 1, PlanKnob::SPAN_MIN_GAIN, 10},
    // nvfp4ctl:dispatch end
    {0, 0, 0, 0, PlanKnob::MAX_CLUSTER_K, 0},  // end marker: matches no shape (m = 0 is unsupported)
};

}  // namespace nvfp4_sm90
