// Fuzz your own limit policy with the ready-made entry point (qlimits/testing/fuzz.hpp): it
// drives checked<your policy> from the fuzzer's bytes and traps on any broken invariant. Built
// with clang -fsanitize=fuzzer -DQLIMITS_EXAMPLE_LIBFUZZER this file is a libFuzzer target; built
// plainly (as CTest runs it) it feeds 1000 pseudo-random inputs through the same checks.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "qlimits/limits/dql.hpp"
#include "qlimits/testing/fuzz.hpp"

using my_policy = qlimits::dql<qlimits::steady_clock_source>; // your limit_policy here

#ifdef QLIMITS_EXAMPLE_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return qlimits::testing::fuzz_limit_policy<my_policy>(data, size);
}
#else
int main() {
    std::vector<std::uint8_t> input(2048);
    std::uint32_t x = 12345;
    for (int round = 0; round < 1000; ++round) {
        for (auto& b : input) b = static_cast<std::uint8_t>((x = x * 1103515245U + 12345U) >> 24);
        namespace qt = qlimits::testing;
        const auto r = qt::check_limit_policy_bytes<my_policy>(input.data(), input.size());
        if (r.failure != nullptr) {
            std::printf("input %d, call %llu: %s\n", round, static_cast<unsigned long long>(r.call),
                        r.failure);
            return 1;
        }
    }
    std::puts("1000 inputs, every invariant held");
    return 0;
}
#endif
