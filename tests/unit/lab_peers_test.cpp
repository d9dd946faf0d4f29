// The peer policies (vegas, gradient2, aimd) in the lab: every limit scenario runs them through
// the registry with its honesty checks passing, and the README's claims about them hold on
// short seeded runs (thresholds are the claims' directions, not the exact numbers).
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "lab_test_support.hpp"

using namespace lab::sim;
using lab_test::metric;
using lab_test::run;

namespace {
const std::vector<std::string> peers = {"vegas", "gradient2", "aimd"};
param_lists shortrun(param_lists p) {
    p["duration-ms"] = {400};
    p["warmup-ms"] = {200};
    return p;
}
} // namespace

TEST_CASE("lab peers: every peer runs in every limit scenario with its checks passing") {
    // veth-bql: 3 completion modes; thread-ring: 2; virtio-bql: 1 (run() fails on any check).
    const auto veth = run("veth-bql", shortrun({{"nrules", {0}}, {"adversarial", {0}}}), peers);
    const auto ring = run("thread-ring", shortrun({{"pattern", {0}}}), peers);
    const auto virtio = run("virtio-bql", shortrun({{"queues", {1}}, {"qdisc", {0}}}), peers);
    const auto rows = [](const std::vector<run_result>& rs) {
        std::set<std::string> names;
        for (const auto& r : rs)
            names.insert(r.policy);
        return names;
    };
    CHECK(rows(veth) == std::set<std::string>{"vegas-item", "vegas-poll", "vegas-time",
                                              "gradient2-item", "gradient2-poll", "gradient2-time",
                                              "aimd-item", "aimd-poll", "aimd-time"});
    CHECK(rows(ring) == std::set<std::string>{"vegas-item", "vegas-batch", "gradient2-item",
                                              "gradient2-batch", "aimd-item", "aimd-batch"});
    CHECK(rows(virtio) == std::set<std::string>{"vegas", "gradient2", "aimd"});
    for (const auto* rs : {&veth, &ring, &virtio})
        for (const auto& r : *rs) {
            INFO(r.scenario << " " << r.case_label << " " << r.policy);
            CHECK(r.get("throughput_pps").value_or(0) > 0);
            CHECK(r.get("limit_final").value_or(0) >= 1);
        }
}

TEST_CASE("lab peers: per-poll completion leaves them unsampled at their initial limit") {
    const auto rs = run("veth-bql", shortrun({{"nrules", {0}}, {"adversarial", {0}}}), peers);
    for (const auto& r : rs) {
        if (r.policy.find("-poll") == std::string::npos)
            continue;
        INFO(r.case_label << " " << r.policy);
        // Every poll drains the ring: no sojourn sample, the initial limit of 20 stays.
        CHECK(r.get("limit_final").value_or(0) == 20);
    }
}

TEST_CASE("lab peers: on a NIC ring completed per interrupt, dql's TCP_RR beats every peer's") {
    const auto rs = run("virtio-bql", shortrun({{"queues", {1}}, {"qdisc", {0}}}),
                        {"dql", "vegas", "gradient2", "aimd"});
    const double dql = metric(rs, "fq 1q", "dql", "rr_tps");
    for (const auto& p : peers) {
        INFO(p);
        CHECK(metric(rs, "fq 1q", p, "rr_tps") < dql);
    }
}

TEST_CASE("lab peers: in a flooded thread ring, gradient2 and aimd per item keep throughput, "
          "gradient2 cuts the sojourn; vegas gets only 0 ns samples and keeps its start") {
    const auto rs = run("thread-ring", shortrun({{"pattern", {0}}}),
                        {"none", "dql-item", "vegas-item", "gradient2-item", "aimd-item"});
    const double none = metric(rs, "flood", "none", "throughput_pps");
    CHECK(metric(rs, "flood", "dql-item", "throughput_pps") < 0.5 * none);
    for (const std::string p : {"gradient2", "aimd"}) {
        INFO(p);
        CHECK(metric(rs, "flood", p + "-item", "throughput_pps") > 0.95 * none);
    }
    // The consumer takes the ring whole and reports the take's parts at one time: every sojourn
    // the facade times ends in the take that began it, 0 ns, which Vegas ignores (as Netflix's
    // VegasLimit refuses rtt <= 0): it stays at its initial limit of 20.
    CHECK(metric(rs, "flood", "vegas-item", "limit_mean") == 20);
    CHECK(metric(rs, "flood", "gradient2-item", "sojourn_p99_us") <
          0.5 * metric(rs, "flood", "none", "sojourn_p99_us"));
}
