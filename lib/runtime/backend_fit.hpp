// Fitting a model to the backend of a session, before anything runs: the backend is asked about
// every node (Backend::query); nodes it wants lowered are lowered (gguftool lower) and nodes it
// cannot run are refused, all of them in one Error (internal to lib/runtime).
#pragma once

#include <string>
#include <vector>

#include "model_impl.hpp"

namespace gguftool::runtime::detail {

struct FittedModel {
    Model model;  // the model as given, or its lowered copy
    // Per node of model's execution order: NodeProfile::lowered_from ("" for a node not lowered).
    std::vector<std::string> lowered_from;
};

// Throws gguftool::Error (where: the model's name) listing every node the backend cannot run and
// why, or naming the node the lowering fails on.
FittedModel fit_to_backend(Model model, const Backend &backend);

}  // namespace gguftool::runtime::detail
