// The lab's one policy registry: every limit policy any scenario (and the real pipeline) can
// run, by name, with what it is and how to build it. A scenario never tests a policy's name
// itself; it asks the registry for its rows and builds each row's policy through the entry's
// factory. To add a policy: add one entry to registry() below (its own knobs, if any, in
// `params`); every limit scenario, `list`, `run`, `sweep`, the pipeline and the tests pick it up.
//
// Rows. A scenario shows one row per entry, except:
//  - an entry with per_completion = true gets one row per completion mode the scenario offers
//    ("dql-item", "dql-poll", "dql-time" in veth-bql; "dql" where only one mode exists);
//  - an entry with a row_param gets one row per value of that parameter when the user gives a
//    list ("--fixed-limit=8,64" -> rows "fixed-8" and "fixed-64"; one value -> row "fixed").
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "completion.hpp"
#include "params.hpp"
#include "peers.hpp"
#include "policy.hpp"

namespace lab::sim {

/// What a policy factory gets: everything it may need to read, nothing it must.
struct policy_args {
    const param_values& params;    ///< every parameter of the run: the scenario's and the policies'
    completion_mode completion;    ///< how this row's consumer reports completions
    bool bytes = false;            ///< units are bytes (a NIC ring) rather than items/packets
    double unit_bytes = 1;         ///< a typical item's size in bytes (the unit when bytes)

    /// A parameter the entry declared (or the scenario has): its value for this run.
    [[nodiscard]] double get(const char* name) const {
        if (auto it = params.find(name); it != params.end()) return it->second;
        std::fprintf(stderr, "qlimits-lab: internal error: policy parameter --%s missing\n", name);
        std::abort();
    }
};

struct policy_entry {
    std::string name;
    std::string help;
    bool per_completion = false; ///< one row per completion mode of the scenario
    std::string row_param;       ///< a parameter whose list gives one row per value
    std::vector<param_spec> params; ///< the policy's own knobs, added to every scenario lacking them
    std::function<std::unique_ptr<sim_policy>(const policy_args&)> make;
};

/// A completion mode a scenario offers: the row suffix and what it means there.
struct completion_choice {
    std::string suffix; ///< "item", "poll", "batch", "time"
    completion_mode mode;
    std::string help;
};

/// One row of a scenario's table: a policy entry with its completion mode (and row value).
struct policy_row {
    std::string name;
    std::string help;
    const policy_entry* entry = nullptr; ///< nullptr: a scenario's own (non-limit) policy
    completion_mode completion = completion_mode::per_item;
    std::optional<double> row_value;     ///< the row_param's value for this row
};

/// Build a row's policy (entry rows only): the one way every model makes its policy.
inline std::unique_ptr<sim_policy> make_policy(const policy_row& row, const param_values& p,
                                               bool bytes = false, double unit_bytes = 1) {
    return row.entry->make(policy_args{p, row.completion, bytes, unit_bytes});
}

inline const std::vector<policy_entry>& registry() {
    static const std::vector<policy_entry> entries = [] {
        std::vector<policy_entry> e;
        e.push_back({"none", "no limit: only the full ring stops the producer (BQL disabled)",
                     false, "", {}, [](const policy_args&) { return make_unlimited(); }});
        e.push_back({"dql", "qlimits::dql (Linux DQL/BQL), 1 ms tick", true, "",
                     {{"hold-ms", "1000", 0, 65535, true, false, {}, "ms",
                       "Linux default: netdev queues call dql_init(HZ), i.e. 1 s (docs/design.md §2.1)"},
                      {"limit-min", "0", 0, 1879048192, true, false, {}, "units",
                       "Linux default: dql_init sets limit_min 0 (docs/design.md §2.1)"}},
                     [](const policy_args& a) {
                         dql_params dp;
                         dp.min_limit = static_cast<std::uint32_t>(a.get("limit-min"));
                         dp.hold_ms = static_cast<std::int64_t>(a.get("hold-ms"));
                         return make_dql(dp);
                     }});
        e.push_back({"fixed", "qlimits::fixed_limit: a constant limit of --fixed-limit units",
                     false, "fixed-limit", {}, [](const policy_args& a) {
                         return make_fixed(static_cast<std::uint32_t>(a.get("fixed-limit")));
                     }});
        e.push_back({"sw",
                     "qlimits::software_limit: lead + step within the cache floor and the "
                     "sojourn budget (docs/software_limit.md)",
                     true, "",
                     {{"sojourn-us", "100", 1, 1e7, false, false, {}, "us",
                       "software_limit_config::sojourn_budget default, veth BQL v7 tx-usecs 100 "
                       "us (docs/software_limit.md)"},
                      {"wake-cost-ns", "2000", 0, 1e9, false, false, {}, "ns",
                       "software_limit_config::wake_cost default (the prior), a futex wake plus "
                       "a context switch (docs/software_limit.md)"},
                      {"learn-wake", "0", 0, 1, true, false, {}, "bool",
                       "software_limit_config::learn_wake_cost default: off "
                       "(docs/software_limit.md, \"Learning the wake cost\")"},
                      {"overhead-share-pct", "10", 1, 100, true, false, {}, "%",
                       "software_limit_config::overhead_share_pct default, a design choice "
                       "(docs/software_limit.md, \"The cost model\")"}},
                     [](const policy_args& a) {
                         return make_software(a.get("sojourn-us"), a.get("wake-cost-ns"),
                                              a.get("learn-wake") != 0,
                                              a.get("overhead-share-pct"));
                     }});
        add_peer_entries<policy_entry, policy_args>(e);
        return e;
    }();
    return entries;
}

inline const policy_entry* find_policy(const std::string& name) {
    for (const auto& e : registry())
        if (e.name == name) return &e;
    return nullptr;
}

/// A scenario's parameters plus every registry entry's own knobs it does not define itself.
inline std::vector<param_spec> with_policy_params(std::vector<param_spec> specs) {
    for (const auto& e : registry())
        for (const auto& p : e.params) {
            bool have = false;
            for (const auto& s : specs) have = have || s.name == p.name;
            if (!have) specs.push_back(p);
        }
    return specs;
}

/// The rows of a limit scenario for the given parameter lists, in registry order.
inline std::vector<policy_row> registry_rows(const std::vector<completion_choice>& modes,
                                             completion_mode default_mode,
                                             const param_lists& lists) {
    std::vector<policy_row> out;
    for (const auto& e : registry()) {
        if (e.per_completion) {
            for (const auto& m : modes)
                out.push_back({modes.size() == 1 ? e.name : e.name + "-" + m.suffix,
                               e.help + ", " + m.help, &e, m.mode, std::nullopt});
            continue;
        }
        const auto vals = e.row_param.empty() ? nullptr : &lists.at(e.row_param);
        if (vals == nullptr || vals->size() <= 1) {
            out.push_back({e.name, e.help, &e, default_mode, std::nullopt});
            continue;
        }
        for (double v : *vals) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%s-%.10g", e.name.c_str(), v);
            out.push_back({buf, e.help + " (" + e.row_param + " " + (buf + e.name.size() + 1) + ")",
                           &e, default_mode, v});
        }
    }
    return out;
}

/// Names of every row a request's policy filter may select: a row's name or its family ("dql"
/// selects dql-item, dql-poll, dql-time; "fixed" selects fixed-8 and fixed-64).
inline bool row_selected(const std::vector<std::string>& filter, const std::string& row) {
    if (filter.empty()) return true;
    for (const auto& f : filter)
        if (row == f || row.rfind(f + "-", 0) == 0) return true;
    return false;
}

} // namespace lab::sim
