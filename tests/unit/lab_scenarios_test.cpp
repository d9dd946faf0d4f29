// The seeds' qualitative results, as the lab's model reproduces them on short seeded runs
// (issue 4, item 6). The thresholds are the seeds' claims ("several-fold", "small", "settles
// at 2"), not the model's exact numbers, so a model change that keeps the mechanism passes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lab_test_support.hpp"

using namespace lab::sim;
using lab_test::metric;
using lab_test::run;

TEST_CASE("lab virtio-bql: with fq_codel, dql raises TCP_RR several-fold; with FIFO barely") {
    const auto rs = run("virtio-bql",
                        {{"queues", {1}}, {"duration-ms", {2500}}, {"warmup-ms", {1200}}},
                        {"none", "dql"});
    const double fq_gain =
        metric(rs, "fq 1q", "dql", "rr_tps") / metric(rs, "fq 1q", "none", "rr_tps");
    const double fifo_gain =
        metric(rs, "fifo 1q", "dql", "rr_tps") / metric(rs, "fifo 1q", "none", "rr_tps");
    MESSAGE("fq gain " << fq_gain << ", fifo gain " << fifo_gain << " (seed: 8.1 and 1.01)");
    CHECK(fq_gain >= 3.0);
    CHECK(fifo_gain < 1.2);
    CHECK(fifo_gain > 0.8);
    // The bytes move from the ring into the qdisc; bulk throughput stays at line rate.
    CHECK(metric(rs, "fq 1q", "dql", "inflight_mean") < 0.2 * metric(rs, "fq 1q", "none", "inflight_mean"));
    CHECK(metric(rs, "fq 1q", "dql", "throughput_bps") >
          0.95 * metric(rs, "fq 1q", "none", "throughput_bps"));
}

TEST_CASE("lab veth-bql: per-item completion pins dql at 2 and costs throughput") {
    // A 100 ms hold time instead of 1 s keeps this test short under sanitizers: DQL shrinks
    // once per hold time, so the mechanism is the same, only ten times faster.
    // Cases: nrules 0 (the consumer 6% slower than the producer) and the consumer twice as
    // fast (speed case 0.5).
    const auto rs = run("veth-bql",
                        {{"nrules", {0}}, {"adversarial", {0}}, {"duration-ms", {400}},
                         {"warmup-ms", {250}}, {"hold-ms", {100}}, {"speed-cases", {0.5}}},
                        {"none", "dql-item", "dql-poll"});
    CHECK(metric(rs, "nrules=0", "dql-item", "limit_final") == 2);
    const double tput = metric(rs, "nrules=0", "dql-item", "throughput_pps") /
                        metric(rs, "nrules=0", "none", "throughput_pps");
    MESSAGE("dql-item / none throughput " << tput << " (seed: 0.80)");
    // The consumer pays a wake call per producer restart: a loss, small where the consumer is
    // the bottleneck anyway (MODEL.md: this moved from 0.44 when wake-ups cost no CPU) ...
    CHECK(tput < 0.97);
    // ... and large where the consumer keeps up: every stop is a sleep and a wake-up.
    const double fast = metric(rs, "cost=0.5x producer", "dql-item", "throughput_pps") /
                        metric(rs, "cost=0.5x producer", "none", "throughput_pps");
    MESSAGE("consumer twice as fast: dql-item / none throughput " << fast);
    CHECK(fast < 0.6);
    CHECK(metric(rs, "cost=0.5x producer", "dql-item", "producer_cpu_ns_per_item") >
          metric(rs, "cost=0.5x producer", "none", "producer_cpu_ns_per_item"));
    // Per-poll completion settles near twice the 64-packet poll.
    const double poll_limit = metric(rs, "nrules=0", "dql-poll", "limit_mean");
    CHECK(poll_limit > 100);
    CHECK(poll_limit < 160);
    // No limit: the ring fills.
    CHECK(metric(rs, "nrules=0", "none", "inflight_mean") > 180);
}

TEST_CASE("lab veth-bql: with a slow consumer the probe waits behind the full ring") {
    const auto rs = run("veth-bql",
                        {{"nrules", {13000}}, {"adversarial", {0}}, {"duration-ms", {3000}},
                         {"warmup-ms", {1100}}},
                        {"none", "dql-item"});
    const double none_p99 = metric(rs, "nrules=13000", "none", "probe_p99_us");
    const double dql_p99 = metric(rs, "nrules=13000", "dql-item", "probe_p99_us");
    MESSAGE("probe p99 none " << none_p99 << " us, dql-item " << dql_p99 << " us (seed ~22 ms)");
    CHECK(none_p99 > 10000); // > 10 ms: ~200+ packets of ~135 us each ahead of it
    CHECK(dql_p99 * 10 < none_p99);
    // Consumer-bound either way: the limit does not cost throughput here.
    CHECK(metric(rs, "nrules=13000", "dql-item", "throughput_pps") >
          0.97 * metric(rs, "nrules=13000", "none", "throughput_pps"));
}

TEST_CASE("lab veth-bql: cheap bursts inflate the time-coalesced dql limit") {
    const auto rs = run("veth-bql",
                        {{"nrules", {1000}}, {"adversarial", {1}}, {"duration-ms", {3000}},
                         {"warmup-ms", {1000}}},
                        {"dql-time"});
    const double inflation =
        metric(rs, "adversarial nrules=1000", "dql-time", "limit_inflation");
    MESSAGE("limit inflation " << inflation << " (seed: 5.82x)");
    CHECK(inflation > 2.0);
}

TEST_CASE("lab veth-bql: a time-coalescing consumer does not sleep on a held producer") {
    // software_limit gives room in steps, so it can hold the producer with fewer than limit()
    // completions pending; a consumer that went to sleep on them (the coalescer reported only
    // after its window or past limit()) left the producer stopped for good, for half of the
    // adversarial case at budgets of 1 and 5 ms, and the run failed its liveness check (run()
    // checks it). Shorter runs did not reach that moment.
    for (const double budget_us : {1000.0, 5000.0}) {
        CAPTURE(budget_us);
        const auto rs = run("veth-bql",
                            {{"nrules", {1000}}, {"adversarial", {1}}, {"sojourn-us", {budget_us}}},
                            {"sw-time"});
        CHECK(metric(rs, "adversarial nrules=1000", "sw-time", "throughput_pps") >
              0.95 * metric(rs, "nrules=1000", "sw-time", "throughput_pps"));
    }
}

TEST_CASE("lab veth-bql: a time-coalescing consumer does not sleep on a ring-full stop the "
          "policy would refuse") {
    // The producer stopped on a full ring while software_limit was over its limit too (room in
    // steps): the idle rule reported only for a policy stop, and a wake-up needs the policy's
    // room, so the consumer slept with 255 units unreported and the producer stopped for good
    // (a review, 2026-12-05). run() checks the liveness check and every other.
    const auto rs = run("veth-bql",
                        {{"nrules", {0}}, {"adversarial", {0}}, {"speed-cases", {0}},
                         {"base-cost-ns", {100}}, {"producer-ns", {50}},
                         {"wake-call-ns", {20000}}, {"sleep-call-ns", {20000}},
                         {"wake-cost-ns", {100000}}, {"duration-ms", {300}},
                         {"warmup-ms", {100}}},
                        {"sw-time"});
    CHECK(metric(rs, "nrules=0", "sw-time", "throughput_pps") > 0);
}

TEST_CASE("lab runs are deterministic for a seed and change with it") {
    const param_lists p{{"nrules", {3500}}, {"adversarial", {0}}, {"duration-ms", {400}},
                        {"warmup-ms", {100}}};
    const auto a = run("veth-bql", p, {"dql-time"});
    const auto b = run("veth-bql", p, {"dql-time"});
    CHECK(json(a) == json(b));
    param_lists q = p;
    q["seed"] = {2};
    const auto c = run("veth-bql", q, {"dql-time"});
    CHECK(json(a) != json(c));
    // The thread count changes nothing.
    const auto jobs = plan({&lab_test::find_scenario("virtio-bql")},
                           {{{"duration-ms", {300}}, {"warmup-ms", {100}}, {"queues", {1}}}}, {});
    CHECK(json(execute(jobs, 1, {})) == json(execute(jobs, 2, {})));
}

TEST_CASE("lab veth-bql: a sleep call longer than the wake-up latency keeps CPU within wall time") {
    // A side that went to sleep was charged its sleep call as CPU but could run again after
    // the wake-up latency alone; with a 4 us call and no latency the consumer's CPU came to
    // 4.95x the wall time (a parameter fuzz of the lab, 2026-12-05). Now a woken side runs
    // again once its sleep call has ended too.
    const auto rs =
        run("veth-bql",
            {{"nrules", {0}}, {"adversarial", {0}}, {"speed-cases", {0}}, {"duration-ms", {60}},
             {"warmup-ms", {20}}, {"sleep-call-ns", {4000}}, {"consumer-wake-ns", {0}},
             {"producer-wake-ns", {0}}},
            {"none", "fixed", "dql-item", "sw-item"});
    for (const char* p : {"none", "fixed", "dql-item", "sw-item"}) {
        CAPTURE(p);
        const double pps = metric(rs, "nrules=0", p, "throughput_pps");
        CHECK(pps > 0);
        CHECK(metric(rs, "nrules=0", p, "producer_cpu_ns_per_item") * pps <= 1.001e9);
        CHECK(metric(rs, "nrules=0", p, "consumer_cpu_ns_per_item") * pps <= 1.001e9);
        CHECK(metric(rs, "nrules=0", p, "cpu_util") <= 1.001);
    }
}

TEST_CASE("lab: a run in which no item leaves the ring reports its waits as null, not 0") {
    // A review (2026-12-05): a consumer that never finished an item in the window showed a
    // sojourn of 0 (a full ring, every wait "0 us"); MODEL.md says a metric with nothing
    // measured is null. (Such a run fails Little's law, which says why; run() would fail it.)
    const auto unchecked = [](const char* name, const param_lists& user) {
        return execute(plan({&lab_test::find_scenario(name)}, {user}, {"none"}), 1, {});
    };
    auto rs = unchecked("veth-bql", {{"nrules", {1e6}}, {"rule-ns", {1e6}}, {"adversarial", {0}},
                                     {"speed-cases", {0}}, {"duration-ms", {100}},
                                     {"warmup-ms", {50}}});
    REQUIRE(rs.size() == 1);
    for (const char* m : {"sojourn_mean_us", "sojourn_p50_us", "sojourn_p99_us", "sojourn_max_us"}) {
        CAPTURE(m);
        CHECK_FALSE(rs[0].get(m).has_value());
    }
    CHECK(rs[0].get("inflight_mean").value_or(0) > 0);
    // thread-ring paced at one item a second: nothing is sent in a 100 ms window.
    rs = unchecked("thread-ring", {{"pattern", {2}}, {"rate", {1}}, {"duration-ms", {100}},
                                   {"warmup-ms", {50}}});
    REQUIRE(rs.size() == 1);
    for (const char* m : {"sojourn_p99_us", "send_wait_mean_us", "send_wait_p99_us"}) {
        CAPTURE(m);
        CHECK_FALSE(rs[0].get(m).has_value());
    }
}
