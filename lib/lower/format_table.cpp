// The lowering of each quantized type.
#include <fmt/format.h>

#include "formats.hpp"
#include "gguftool/error.hpp"

namespace gguftool::lower::detail {

FormatLowering format_lowering(GgmlType type) {
    switch (type) {
        case GgmlType::q4_0:
            return lower_q4_0;
        case GgmlType::q4_1:
            return lower_q4_1;
        case GgmlType::q5_0:
            return lower_q5_0;
        case GgmlType::q5_1:
            return lower_q5_1;
        case GgmlType::q8_0:
            return lower_q8_0;
        case GgmlType::q8_1:
            return lower_q8_1;
        case GgmlType::q1_0:
            return lower_q1_0;
        case GgmlType::q2_0:
            return lower_q2_0;
        case GgmlType::mxfp4:
            return lower_mxfp4;
        case GgmlType::nvfp4:
            return lower_nvfp4;
        case GgmlType::tq1_0:
            return lower_tq1_0;
        case GgmlType::tq2_0:
            return lower_tq2_0;
        case GgmlType::q2_k:
            return lower_q2_k;
        case GgmlType::q3_k:
            return lower_q3_k;
        case GgmlType::q4_k:
            return lower_q4_k;
        case GgmlType::q5_k:
            return lower_q5_k;
        case GgmlType::q6_k:
            return lower_q6_k;
        case GgmlType::q8_k:
            return lower_q8_k;
        case GgmlType::iq2_xxs:
            return lower_iq2_xxs;
        case GgmlType::iq2_xs:
            return lower_iq2_xs;
        case GgmlType::iq2_s:
            return lower_iq2_s;
        case GgmlType::iq3_xxs:
            return lower_iq3_xxs;
        case GgmlType::iq3_s:
            return lower_iq3_s;
        case GgmlType::iq1_s:
            return lower_iq1_s;
        case GgmlType::iq1_m:
            return lower_iq1_m;
        case GgmlType::iq4_nl:
            return lower_iq4_nl;
        case GgmlType::iq4_xs:
            return lower_iq4_xs;
        default:
            break;
    }
    throw Error(fmt::format("internal: {} is not a block format", type_name(type)));
}

}  // namespace gguftool::lower::detail
