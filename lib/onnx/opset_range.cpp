// The one place that teaches ONNX 1.12 about opsets beyond 17.
//
// ONNX keeps, per domain, the range of opset versions it knows
// (OpSchemaRegistry::DomainToVersionRange, filled in its constructor in onnx/defs/schema.h: the
// default domain is [1, 17] in 1.12). RegisterSchema refuses a schema whose since_version lies
// outside that range, so DequantizePacked-29 and Unpack-29 need the range widened first. 1.12's
// only setter, AddDomainToVersion, is for new domains (it asserts the domain is absent), so we
// update the entry through the map that Map() exposes. The registry object is a mutable
// singleton, so writing through the const reference is well defined; register_schemas() calls
// this once, under std::call_once, before any schema lookup of ours. Standard operators are
// unaffected: a lookup at version 29 still finds each one's newest schema (e.g. Cast-13).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "schemas.hpp"

namespace gguftool::opset29::detail {

void extend_default_domain(int max_version) {
    auto &range = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    auto &map = const_cast<std::unordered_map<std::string, std::pair<int, int>> &>(range.Map());
    std::pair<int, int> &known = map[onnx::ONNX_DOMAIN];
    known.second = std::max(known.second, max_version);
}

}  // namespace gguftool::opset29::detail
