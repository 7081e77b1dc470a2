// Fitting a model to the backend of a session, before anything runs: the backend is asked about
// every node (Backend::query); nodes it wants lowered are lowered (gguftool lower), and nodes it
// cannot run are placed on the fallback backend (the CPU) when there is one, or refused, all of
// them in one Error (internal to lib/runtime).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_impl.hpp"

namespace gguftool::runtime::detail {

struct FittedModel {
    Model model;  // the model as given, or its lowered copy
    // Per node of model's execution order: NodeProfile::lowered_from ("" for a node not lowered).
    std::vector<std::string> lowered_from;
    // Per node of model's execution order: its backend (0: the session's, 1: the fallback) and,
    // on the fallback, why the session's backend does not run it. Empty when every node runs on
    // the session's backend.
    std::vector<uint8_t> on;
    std::vector<std::string> reasons;
};

// Throws gguftool::Error (where: the model's name) listing every node that cannot run and why
// (without a fallback: every node the backend cannot run; with one, those neither runs), or
// naming the node the lowering fails on.
// `lower` false (a fused model, which the lowering would undo): a node the backend wants lowered
// is placed on the fallback instead, as one it cannot run.
FittedModel fit_to_backend(Model model, const Backend &backend, const Backend *fallback = nullptr,
                           bool lower = true);

}  // namespace gguftool::runtime::detail
