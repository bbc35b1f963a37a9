// Per-shape dispatch table of the sm_90a NVFP4 GEMM: plan knobs (scope=plan in sm90_config.cuh)
// set for one problem shape, read by the host planner (sm90_plan.cuh, plan_knobs). A shape without
// an entry, or a knob without one, keeps the knob's compile-time value, so the empty table is the
// planner's own choice everywhere. Kernel-scope knobs (stages, tile N, ...) are one value per build
// and are not set here.
//
// Machine-edited (a later `nvfp4ctl tune` writes it; nvfp4ctl.build.knobs reads and writes it): the
// entries sit between the two marker lines, one per line, exactly
//   {M, N, K, L, PlanKnob::NAME, VALUE},
// where NAME is a plan knob without its NVFP4_SM90_ prefix and VALUE one of its declared values.
// A value can only narrow what the build contains: e.g. ODD_SPLIT 1 for a shape has no effect in a
// build compiled with NVFP4_SM90_ODD_SPLIT=0, which has no 3-CTA kernels.
#pragma once

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
};

struct DispatchEntry {
  int m, n, k, l;
  PlanKnob knob;
  int value;
};

constexpr DispatchEntry kDispatchTable[] = {
    // nvfp4ctl:dispatch begin
    // nvfp4ctl:dispatch end
    {0, 0, 0, 0, PlanKnob::MAX_CLUSTER_K, 0},  // end marker: matches no shape (m = 0 is unsupported)
};

}  // namespace nvfp4_sm90
