// The element type of every node's inputs and outputs in a loaded model, known before anything
// runs (what a backend is asked about: Backend::query), from the graph inputs' declared types, the
// initializers and one output rule per operator (internal to lib/runtime).
#pragma once

#include <vector>

#include "model_impl.hpp"

namespace gguftool::runtime::detail {

// One node's element types; DataType::undefined for an absent optional input and for what cannot
// be known (an undeclared graph input, an attribute of the wrong type).
struct NodeDtypes {
    std::vector<DataType> inputs;
    std::vector<DataType> outputs;
};

// One entry per node of m.order, in that order.
std::vector<NodeDtypes> infer_dtypes(const Model::Impl &m);

}  // namespace gguftool::runtime::detail
