// A scenario: a model of one seed system, its parameters, the policies it compares, and how its
// results line up against the seed's measurements.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "params.hpp"
#include "registry.hpp"
#include "result.hpp"

namespace lab::sim {

struct scenario {
    std::string name;
    std::string summary;
    std::vector<param_spec> params; ///< common_params(), the scenario's own, the policies' knobs
    /// The rows (policies) to compare for the given parameter lists: registry_rows() for a limit
    /// scenario, its own list for another kind (virtio-dim's interrupt moderation).
    std::function<std::vector<policy_row>(const param_lists&)> rows;
    /// A short label of a case's sweep values, e.g. "fq 1q".
    std::function<std::string(const param_values&)> case_label;
    /// One deterministic run of one case under one row's policy.
    std::function<run_result(const param_values&, const policy_row&)> run;
    /// The cases to run for the given parameter values (default: every sweep combination).
    /// A row_param's list makes rows, not cases: the cases see its first value.
    std::function<std::vector<param_values>(const param_lists&)> cases;
    /// Roughly how many events a run of these values would simulate, and the parameters that
    /// set the rate (named in the refusal when the estimate is over event_budget).
    std::function<std::pair<double, std::string>(const param_values&)> estimate_events;
    /// Whether a case of these values ignores a parameter (veth's speed cases set their cost
    /// from --speed-cases, not from --base-cost-ns, --nrules or --rule-ns): a sweep of that
    /// parameter leaves such cases out. Empty: every case uses every parameter.
    std::function<bool(const param_values&, const std::string&)> case_ignores;
    /// A refusal for values that are each in range but cannot run together (empty: none).
    std::function<std::optional<std::string>(const param_values&)> check;
    /// Markdown lines setting the model's results beside the seed's numbers.
    std::function<std::string(const std::vector<run_result>&)> compare;
};

} // namespace lab::sim
