// MatMul on the CPU backend (OpenBLAS sgemm, cut into pieces over the thread pool): the time of
// one node on the shapes of an LLM decoder step.
//
//   bench_matmul [THREADS] [REPS]     (defaults: all cores, 20)
//
// Prints the best and median seconds and GFLOP/s per shape.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "gguftool/runtime.hpp"
#include "onnx_builder.hpp"

namespace rt = gguftool::runtime;

namespace {

rt::Tensor random_tensor(const rt::Shape &shape, uint32_t seed) {
    size_t n = 1;
    for (const int64_t d : shape) n *= size_t(d);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> v(n);
    for (float &x : v) x = dist(gen);
    return rt::Tensor::from_values(gguftool::DataType::float32, shape, v);
}

}  // namespace

int main(int argc, char **argv) {
    const unsigned threads = argc > 1 ? unsigned(std::atoi(argv[1])) : 0;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
    struct Case {
        const char *what;
        rt::Shape a, b;
    };
    const std::vector<Case> cases = {
        {"decode projection", {1, 4096}, {4096, 4096}},
        {"prefill projection", {1, 64, 4096}, {4096, 4096}},
        {"attention scores (GQA 5-D)", {1, 8, 4, 128, 128}, {1, 8, 1, 128, 128}},
        {"attention scores, decode", {1, 32, 1, 128}, {1, 32, 128, 512}},
    };
    for (const Case &c : cases) {
        gguftool::testkit::ModelBuilder g(17);
        g.input("a").input("b").output("y");
        g.node("MatMul", {"a", "b"}, {"y"});
        rt::Session s(g.model(), rt::RunOptions{.threads = threads});
        const rt::Inputs in = {{"a", random_tensor(c.a, 1)}, {"b", random_tensor(c.b, 2)}};
        s.run(in);  // warm up
        std::vector<double> secs;
        for (int r = 0; r < reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            s.run(in);
            secs.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        const double best = *std::min_element(secs.begin(), secs.end());
        const rt::Shape y = s.run(in).at(0).second.shape();
        double flops = 2.0 * double(c.a.back());
        for (const int64_t d : y) flops *= double(d);
        fmt::print("{:<28} {} x {}: best {:.6f} s, median {:.6f} s, {:.1f} GFLOP/s\n", c.what,
                   rt::shape_string(c.a), rt::shape_string(c.b), best,
                   gguftool::bench::median(secs), flops / best / 1e9);
    }
    return 0;
}
