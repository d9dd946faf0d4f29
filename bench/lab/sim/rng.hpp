// Seeded randomness for the lab. The standard library's distributions are implementation-defined
// (libstdc++ and libc++ give different numbers for the same engine), so results would depend on
// the compiler; these few draws are computed here from raw 64-bit words instead.
#pragma once

#include <cmath>
#include <cstdint>

namespace lab::sim {

/// xoshiro256** seeded through splitmix64: fast, small, and the same sequence everywhere.
class rng {
public:
    explicit rng(std::uint64_t seed) noexcept {
        for (auto& w : s_) w = splitmix(seed);
    }
    std::uint64_t next() noexcept {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    /// Uniform in [0, 1), 53 random bits.
    double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    /// Uniform in [lo, hi).
    double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform(); }
    /// Uniform integer in [0, n) (n > 0); the modulo bias is below 2^-32 for the n used here.
    std::uint64_t below(std::uint64_t n) noexcept { return n == 0 ? 0 : next() % n; }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
    static std::uint64_t splitmix(std::uint64_t& x) noexcept {
        std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    std::uint64_t s_[4]{};
};

/// A duration scaled by a uniform factor in [1 - jitter, 1 + jitter]: the run-to-run variation
/// of a cost that the seeds' repeated measurements show (modelling choice: uniform, no tails).
inline std::uint64_t jittered(rng& r, double base_ns, double jitter) noexcept {
    const double f = jitter > 0 ? r.uniform(1.0 - jitter, 1.0 + jitter) : 1.0;
    const double v = base_ns * f;
    return v <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(v));
}

} // namespace lab::sim
