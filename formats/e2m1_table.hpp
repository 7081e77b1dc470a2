// The FP4 (E2M1) code values, doubled so they are integers, shared by MXFP4 and NVFP4. Codes 0-7
// are 0, 0.5, 1, 1.5, 2, 3, 4, 6 and codes 8-15 their negatives (code 8, "-0", is plain 0 here).
// Source: ggml src/ggml-common.h, kvalues_mxfp4 / kvalues_fp4 (from the OCP Microscaling Formats
// MX v1.0 spec); the decoders pair it with a halved scale.
#pragma once

#include <cstdint>

namespace gguftool::formats {

alignas(16) inline constexpr int8_t kE2m1Doubled[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                                        0, -1, -2, -3, -4, -6, -8, -12};

}  // namespace gguftool::formats
