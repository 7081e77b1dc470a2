// The ONNX graph executor behind `gguftool run`, all of it: host tensors, their .npy/.pb I/O, the
// backend interface, models and sessions, allclose and the node-test runner. Each part has its own
// header under gguftool/runtime/ for code that needs only that part (a backend needs backend.hpp).
#pragma once

#include "gguftool/runtime/allclose.hpp"
#include "gguftool/runtime/backend.hpp"
#include "gguftool/runtime/node_tests.hpp"
#include "gguftool/runtime/session.hpp"
#include "gguftool/runtime/tensor.hpp"
#include "gguftool/runtime/tensor_io.hpp"
