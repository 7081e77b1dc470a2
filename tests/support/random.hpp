// The kit's random numbers, the same on every standard library: std::mt19937 is fully specified
// and the transforms are ours (a library's distributions are not). The sample model and the tiny
// decoders draw their weights from it.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

namespace gguftool::testkit {

class Random {
public:
    explicit Random(uint32_t seed) : mt_(seed) {}

    double uniform() { return (double(mt_()) + 0.5) / 4294967296.0; }  // in (0, 1)
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

    // A standard normal variate: the cosine half of a Box-Muller pair, the sine half dropped.
    double normal() { return box_muller()[0]; }

    // `n` normal variates of `mean` and `std` (normal()).
    std::vector<float> normal(size_t n, double mean, double std) {
        std::vector<float> v(n);
        for (float &x : v) x = float(mean + std * normal());
        return v;
    }

    // Standard normal variates using both halves of each Box-Muller pair, the cosine first.
    double normal_paired() {
        if (have_spare_) {
            have_spare_ = false;
            return spare_;
        }
        const std::array<double, 2> pair = box_muller();
        spare_ = pair[1];
        have_spare_ = true;
        return pair[0];
    }

private:
    std::array<double, 2> box_muller() {
        const double u1 = uniform(), u2 = uniform();
        const double r = std::sqrt(-2.0 * std::log(u1));
        const double a = 2.0 * std::numbers::pi * u2;
        return {r * std::cos(a), r * std::sin(a)};
    }

    std::mt19937 mt_;
    double spare_ = 0;
    bool have_spare_ = false;
};

}  // namespace gguftool::testkit
