// Shared by the lab's scenario tests: run a scenario with some parameters overridden (every run
// must pass its honesty checks), and read one metric of one run.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../../bench/lab/sim/report.hpp"
#include "../../bench/lab/sim/runner.hpp"
#include "../../bench/lab/sim/scenarios.hpp"

namespace lab_test {
using namespace lab::sim;

inline const scenario& find_scenario(const std::string& name) {
    static const std::vector<scenario> all = all_scenarios();
    for (const auto& s : all)
        if (s.name == name) return s;
    FAIL("no scenario " << name);
    return all.front();
}

/// Run `name` with `user` parameters and the given policies (empty: all), on one thread.
inline std::vector<run_result> run(const std::string& name, const param_lists& user,
                                   const std::vector<std::string>& policies) {
    const auto jobs = plan({&find_scenario(name)}, {user}, policies);
    auto results = execute(jobs, 1, {});
    for (const auto& r : results) {
        INFO(r.scenario << " " << r.case_label << " " << r.policy);
        for (const auto& f : r.failures) FAIL_CHECK(f);
    }
    return results;
}

inline double metric(const std::vector<run_result>& rs, const std::string& label,
                     const std::string& policy, const std::string& name) {
    for (const auto& r : rs)
        if (r.case_label == label && r.policy == policy) {
            const auto v = r.get(name);
            REQUIRE_MESSAGE(v.has_value(), label << " " << policy << " " << name);
            return *v;
        }
    FAIL("no run " << label << " " << policy);
    return 0;
}
} // namespace lab_test
