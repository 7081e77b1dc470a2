// The nnopbase objects behind the opaque handles. An object an executor captured at phase one is
// "held" until that executor is launched: destroying it earlier is refused.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/view.hpp"

namespace gguftool::cann_emulator {

// Phase-one executors that still need an object, and the operator of the latest one.
struct Holds {
    int count = 0;
    std::string latest;
};

struct TensorObject {
    View view;
    uintptr_t list = 0;  // the tensor list that owns it (and destroys it), if any
    Holds holds;
};

struct ScalarObject {
    ScalarValue value;
    Holds holds;
};

struct TensorListObject {
    std::vector<uintptr_t> tensors;
    Holds holds;
};

struct Objects {
    std::unordered_map<uintptr_t, TensorObject> tensors;
    std::unordered_map<uintptr_t, ScalarObject> scalars;
    std::unordered_map<uintptr_t, TensorListObject> lists;
};

}  // namespace gguftool::cann_emulator
