#include "opapi/operator_rules.hpp"

#include <algorithm>
#include <utility>

namespace gguftool::cann_emulator::rules {
namespace {

using Pair = std::pair<aclDataType, aclDataType>;

// Every SoC (the 910 and default branch of op_api's cast dispatch).
constexpr Pair kDefaultPairs[] = {
    {ACL_UINT8, ACL_FLOAT16}, {ACL_UINT8, ACL_FLOAT},   {ACL_UINT8, ACL_INT32},
    {ACL_INT8, ACL_FLOAT16},  {ACL_INT8, ACL_FLOAT},    {ACL_INT8, ACL_INT32},
    {ACL_INT32, ACL_FLOAT16}, {ACL_INT32, ACL_FLOAT},   {ACL_INT32, ACL_INT8},
    {ACL_INT32, ACL_UINT8},   {ACL_INT32, ACL_BOOL},    {ACL_FLOAT16, ACL_FLOAT},
    {ACL_FLOAT, ACL_FLOAT16}, {ACL_FLOAT16, ACL_INT32}, {ACL_FLOAT, ACL_INT32},
    {ACL_FLOAT16, ACL_UINT8}, {ACL_FLOAT16, ACL_INT8},  {ACL_FLOAT16, ACL_BOOL},
    {ACL_BOOL, ACL_FLOAT16},  {ACL_BOOL, ACL_FLOAT},    {ACL_BOOL, ACL_INT32},
    {ACL_BOOL, ACL_UINT8},    {ACL_BOOL, ACL_INT8},     {ACL_BOOL, ACL_INT64},
    {ACL_INT64, ACL_INT32},   {ACL_INT32, ACL_INT64},   {ACL_INT64, ACL_FLOAT16},
    {ACL_INT64, ACL_UINT8},   {ACL_UINT8, ACL_INT64},
};

// DAV_2201 (Atlas A2) adds these, and every pair of distinct 8- to 64-bit integers below.
constexpr Pair kA2Pairs[] = {
    {ACL_BF16, ACL_FLOAT},    {ACL_FLOAT, ACL_BF16},  {ACL_BF16, ACL_FLOAT16},
    {ACL_FLOAT16, ACL_BF16},  {ACL_BF16, ACL_INT32},  {ACL_INT32, ACL_BF16},
    {ACL_BF16, ACL_INT8},     {ACL_INT8, ACL_BF16},   {ACL_BF16, ACL_UINT8},
    {ACL_UINT8, ACL_BF16},    {ACL_BF16, ACL_BOOL},   {ACL_BOOL, ACL_BF16},
    {ACL_BF16, ACL_INT64},    {ACL_INT64, ACL_BF16},  {ACL_INT16, ACL_FLOAT16},
    {ACL_FLOAT16, ACL_INT16}, {ACL_INT16, ACL_FLOAT}, {ACL_FLOAT, ACL_INT16},
    {ACL_FLOAT, ACL_INT8},    {ACL_FLOAT, ACL_UINT8}, {ACL_FLOAT, ACL_INT64},
    {ACL_INT64, ACL_FLOAT},
};
constexpr DtypeSet kA2CrossIntegers{ACL_UINT8, ACL_INT8,   ACL_INT16, ACL_UINT16,
                                    ACL_INT32, ACL_UINT32, ACL_INT64};

constexpr Pair k310pPairs[] = {
    {ACL_FLOAT, ACL_INT16}, {ACL_FLOAT, ACL_INT8}, {ACL_INT16, ACL_FLOAT}};

template <size_t N>
bool listed(const Pair (&pairs)[N], aclDataType from, aclDataType to) {
    return std::find(std::begin(pairs), std::end(pairs), Pair{from, to}) != std::end(pairs);
}

}  // namespace

bool cast_on_aicore(SocFamily family, aclDataType from, aclDataType to) {
    if (from == to || listed(kDefaultPairs, from, to)) return true;
    if (family == SocFamily::ascend910b)
        return listed(kA2Pairs, from, to) ||
               (kA2CrossIntegers.contains(from) && kA2CrossIntegers.contains(to));
    return listed(k310pPairs, from, to);
}

}  // namespace gguftool::cann_emulator::rules
