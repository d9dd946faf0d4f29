// The lab's policy registry: one entry per policy, rows derived per scenario, unknown names
// refused, and each row's policy built by its entry (never a silent fallback to dql).
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "../../bench/lab/sim/cli.hpp"
#include "../../bench/lab/sim/registry.hpp"
#include "../../bench/lab/sim/report.hpp"
#include "../../bench/lab/sim/runner.hpp"
#include "../../bench/lab/sim/scenarios.hpp"

using namespace lab::sim;

namespace {
std::vector<std::string> names(const std::vector<policy_row>& rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) out.push_back(r.name);
    return out;
}
const scenario& find(const std::string& name) {
    static const std::vector<scenario> all = all_scenarios();
    for (const auto& s : all)
        if (s.name == name) return s;
    FAIL("no scenario " << name);
    return all.front();
}
} // namespace

TEST_CASE("lab registry: every entry is named, described and builds a policy") {
    const param_values p{{"limit-min", 0}, {"hold-ms", 1000}, {"fixed-limit", 8}};
    for (const auto& e : registry()) {
        INFO(e.name);
        CHECK_FALSE(e.name.empty());
        CHECK_FALSE(e.help.empty());
        CHECK(find_policy(e.name) == &e);
        for (const auto& spec : e.params) CHECK_FALSE(spec.source.empty());
        param_values q = p;
        for (const auto& spec : e.params) {
            std::vector<double> v;
            REQUIRE_FALSE(parse_list(spec, spec.def, v).has_value());
            q[spec.name] = v.front();
        }
        auto pol = e.make(policy_args{q, completion_mode::per_item});
        REQUIRE(pol != nullptr);
        CHECK(pol->inflight() == 0);
        CHECK(pol->queued(1, 0));
        CHECK(pol->inflight() == 1);
    }
    CHECK(find_policy("no-such-policy") == nullptr);
}

TEST_CASE("lab registry: rows per completion mode and per row-parameter value") {
    const auto& veth = find("veth-bql");
    param_lists l = resolve(veth.params, {});
    CHECK(names(veth.rows(l)) ==
          std::vector<std::string>{"none", "dql-item", "dql-poll", "dql-time", "fixed", "sw-item",
                                   "sw-poll", "sw-time", "vegas-item", "vegas-poll", "vegas-time",
                                   "gradient2-item", "gradient2-poll", "gradient2-time", "aimd-item",
                                   "aimd-poll", "aimd-time"});
    l["fixed-limit"] = {8, 64};
    const auto rows = veth.rows(l);
    CHECK(names(rows) ==
          std::vector<std::string>{"none", "dql-item", "dql-poll", "dql-time", "fixed-8", "fixed-64",
                                   "sw-item", "sw-poll", "sw-time", "vegas-item", "vegas-poll",
                                   "vegas-time", "gradient2-item", "gradient2-poll", "gradient2-time",
                                   "aimd-item", "aimd-poll", "aimd-time"});
    CHECK(rows[2].completion == completion_mode::per_poll);
    CHECK(rows[5].row_value == 64.0);
    // A scenario with one completion mode names the row after the policy alone.
    const auto& virtio = find("virtio-bql");
    CHECK(names(virtio.rows(resolve(virtio.params, {}))) ==
          std::vector<std::string>{"none", "dql", "fixed", "sw", "vegas", "gradient2", "aimd"});
}

TEST_CASE("lab registry: a fixed-limit list runs one row per limit with that limit") {
    const auto& veth = find("veth-bql");
    const auto jobs = plan({&veth}, {param_lists{{"fixed-limit", {8, 64}}, {"nrules", {0}},
                                                 {"adversarial", {0}}, {"speed-cases", {0}}}},
                           {"fixed"});
    REQUIRE(jobs.size() == 2);
    CHECK(jobs[0].row.name == "fixed-8");
    CHECK(jobs[0].params.at("fixed-limit") == 8);
    CHECK(jobs[1].params.at("fixed-limit") == 64);
}

TEST_CASE("lab registry: an unknown policy name is refused by run") {
    const std::vector<scenario> all = all_scenarios();
    std::vector<std::string> args{"run", "veth-bql", "--policy=dql-bogus"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    run_options o;
    const auto err = parse_run(static_cast<int>(argv.size()), argv.data(), all, o);
    REQUIRE(err.has_value());
    CHECK(err->find("unknown policy 'dql-bogus'") != std::string::npos);
    // A family name selects its rows; a row name of a list selects that row.
    std::vector<std::string> ok{"run", "veth-bql", "--fixed-limit=8,64", "--policy=fixed-64"};
    argv.clear();
    for (auto& a : ok) argv.push_back(a.data());
    run_options o2;
    CHECK_FALSE(parse_run(static_cast<int>(argv.size()), argv.data(), all, o2).has_value());
}

TEST_CASE("lab validate: an empty window and a run over the event budget are refused") {
    const auto& veth = find("veth-bql");
    auto jobs = plan({&veth}, {param_lists{{"nrules", {0}}, {"adversarial", {0}}, {"speed-cases", {0}},
                                          {"warmup-ms", {500}}, {"duration-ms", {500}}}},
                     {"none"});
    REQUIRE(jobs.size() == 1);
    auto err = validate(jobs[0]);
    REQUIRE(err.has_value());
    CHECK(err->find("--warmup-ms=500 must be below --duration-ms=500") != std::string::npos);
    jobs = plan({&veth}, {param_lists{{"nrules", {0}}, {"adversarial", {0}}, {"speed-cases", {0}},
                                     {"producer-ns", {1}}, {"base-cost-ns", {0}}}},
                {"none"});
    err = validate(jobs.at(0));
    REQUIRE(err.has_value());
    CHECK(err->find("--producer-ns") != std::string::npos);
    CHECK(err->find("budget") != std::string::npos);
    // Every default case of every scenario is within the budget.
    for (const auto& sc : all_scenarios())
        for (const auto& j : plan({&sc}, {param_lists{}}, {})) CHECK_FALSE(validate(j).has_value());
}

TEST_CASE("lab validate: the event estimate counts segments and the rr flow's own pace") {
    // Two parameter sets of a fuzz of the lab (2026-12-05) that the estimate let through and
    // that ran for minutes: 64 KB messages in 64-byte segments at zero costs (the estimate
    // counted messages, ~1e6 a second, where the segments are ~1e9), and a request/response
    // flow with a zero RTT and no bulk flow (~1e9 transactions a simulated second; the estimate
    // counted bulk buffers only).
    const auto refused = [](const char* name, param_lists l, const char* knob) {
        const auto& sc = find(name);
        const auto jobs = plan({&sc}, {std::move(l)}, {});
        REQUIRE_FALSE(jobs.empty());
        const auto err = validate(jobs.front());
        REQUIRE(err.has_value());
        CHECK(err->find("budget") != std::string::npos);
        CHECK(err->find(knob) != std::string::npos);
    };
    refused("virtio-dim",
            {{"mss", {64}}, {"msg-bytes", {65536}}, {"pkt-ns", {0}}, {"poll-ns", {0}},
             {"irq-ns", {0}}, {"copy-ns-per-byte", {0}}, {"delay-us", {0}}, {"gbps", {1000}}},
            "--mss");
    refused("virtio-bql",
            {{"bulk-flows", {0}}, {"rtt-us", {0}}, {"rtt-mdev-us", {0}}, {"tx-usecs", {0}},
             {"rr-bytes", {1}}, {"queues", {1}}, {"qdisc", {0}}},
            "--rtt-us");
    // The same with the receiver's cost per segment, or an RTT, back: within the budget.
    const auto& vdim = find("virtio-dim");
    for (const auto& j :
         plan({&vdim}, {param_lists{{"mss", {64}}, {"msg-bytes", {65536}}, {"gbps", {1000}}}}, {}))
        CHECK_FALSE(validate(j).has_value());
    const auto& vbql = find("virtio-bql");
    for (const auto& j : plan({&vbql}, {param_lists{{"bulk-flows", {0}}, {"rr-bytes", {1}}}}, {}))
        CHECK_FALSE(validate(j).has_value());
}

TEST_CASE("lab validate: a series too long to keep, and virtio bytes past 2^31, are refused") {
    // A review (2026-12-05): --sample-us=10 over a minute kept 6e6 samples (473 MB) a run, and
    // a full virtio ring of 65536 x 256 KB buffers aborted unlimited's 32-bit books.
    const auto first = [](const char* name, param_lists l) {
        const auto& sc = find(name);
        auto jobs = plan({&sc}, {std::move(l)}, {"none"});
        REQUIRE_FALSE(jobs.empty());
        return validate(jobs.front());
    };
    auto err = first("thread-ring", {{"duration-ms", {60000}}, {"sample-us", {10}}});
    REQUIRE(err.has_value());
    CHECK(err->find("--sample-us=10") != std::string::npos);
    CHECK(err->find("6e+06 time-series samples") != std::string::npos);
    // The longest run at the default resolution (600,000 samples) is kept.
    CHECK_FALSE(first("veth-bql", {{"duration-ms", {600000}}, {"nrules", {13000}},
                                   {"adversarial", {0}}, {"speed-cases", {0}}})
                    .has_value());
    err = first("virtio-bql", {{"ring", {65536}}, {"gso-bytes", {262144}}, {"queues", {1}}});
    REQUIRE(err.has_value());
    CHECK(err->find("--ring x --gso-bytes must stay below 2^31") != std::string::npos);
    err = first("virtio-bql", {{"ring", {32768}}, {"gso-bytes", {65536}}, {"queues", {1}}});
    REQUIRE(err.has_value()); // exactly 2^31
    CHECK_FALSE(first("virtio-bql", {{"ring", {32767}}, {"gso-bytes", {65536}}, {"queues", {1}}})
                    .has_value());
}

TEST_CASE("lab report: a metric that is not finite is null in JSON and '-' in tables") {
    run_result r = blank_result();
    r.scenario = "s";
    r.policy = "p";
    r.set("throughput_pps", std::numeric_limits<double>::quiet_NaN());
    r.set("inflight_mean", std::numeric_limits<double>::infinity());
    const std::string j = json({r});
    CHECK(j.find("nan") == std::string::npos);
    CHECK(j.find(": inf") == std::string::npos);
    CHECK(j.find("\"throughput_pps\": null") != std::string::npos);
    CHECK(j.find("\"inflight_mean\": null") != std::string::npos);
    CHECK(table({r}).find("nan") == std::string::npos);
}
