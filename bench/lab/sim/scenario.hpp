// A scenario: a model of one seed system, its parameters, the policies it compares, and how its
// results line up against the seed's measurements.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "params.hpp"
#include "result.hpp"

namespace lab::sim {

struct policy_spec {
    std::string name;
    std::string help;
};

struct scenario {
    std::string name;
    std::string summary;
    std::vector<param_spec> params; ///< common_params() plus the scenario's own
    std::vector<policy_spec> policies;
    /// A short label of a case's sweep values, e.g. "fq 1q".
    std::function<std::string(const param_values&)> case_label;
    /// One deterministic run of one case under one policy.
    std::function<run_result(const param_values&, const std::string& policy)> run;
    /// The cases to run for the given parameter values (default: every sweep combination).
    std::function<std::vector<param_values>(const param_lists&)> cases;
    /// Markdown lines setting the model's results beside the seed's numbers.
    std::function<std::string(const std::vector<run_result>&)> compare;
};

} // namespace lab::sim
