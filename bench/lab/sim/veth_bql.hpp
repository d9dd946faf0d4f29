// Scenario veth-bql (seed 001): a pktgen-like flood into veth's 256-entry ptr_ring, drained by a
// NAPI consumer that polls in batches of up to 64 and spends a per-packet cost that grows with
// the number of iptables rules. A ping-like probe shares the qdisc (fq_codel, so it jumps the
// flood) and measures the delay the ring adds. Optionally an adversarial case alternates bursts
// of cheap packets with normal ones (the veth series' adversarial sweep).
//
// Components: flood source + probe source -> fair qdisc -> producer (per-packet cost, stops on the
// policy or a full ring, wake-up latency) -> software ring -> consumer (sleeps when the ring is
// empty, wake-up latency, polls in batches, per-packet cost) -> completion reports to the policy.
#pragma once

#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "completion.hpp"
#include "costs.hpp"
#include "engine.hpp"
#include "params.hpp"
#include "policy.hpp"
#include "qdisc.hpp"
#include "result.hpp"
#include "rng.hpp"
#include "scenario.hpp"
#include "stats.hpp"

namespace lab::sim::veth {

inline std::vector<param_spec> params() {
    std::vector<param_spec> p = common_params();
    const std::vector<param_spec> own{
        {"nrules", "0,3500,5000,13000", 0, 1000000, true, true, {}, "rules",
         "seed 001 (--nrules 0/3500/5000); 13000 is the ping test of docs/references.md [VE2]"},
        {"ring", "256", 1, 65536, true, false, {}, "entries", "veth ptr_ring size, 256 (docs/design.md §4)"},
        {"budget", "64", 1, 4096, true, false, {}, "packets", "NAPI poll budget 64 (docs/design.md §4)"},
        {"producer-ns", "418", 1, 1e9, false, false, {}, "ns",
         "seed 001: pktgen ignoring the stop ran at 2.39 Mpps, its own speed (1/2.39M)"},
        {"base-cost-ns", "442", 0, 1e9, false, false, {}, "ns",
         "seed 001: BQL off, nrules 0: 2,264,138 pps with the ring ~200 full (consumer-bound)"},
        {"rule-ns", "10.39", 0, 1e6, false, false, {}, "ns",
         "seed 001: BQL off, nrules 3500: 27,161 pps -> (36.8 us - 0.442 us) / 3500"},
        {"jitter", "0.1", 0, 0.9, false, false, {}, "fraction",
         "modelling choice: +-10% uniform spread of every per-packet cost, of the wake and sleep "
         "calls and of the probe interval; not of poll-ns, the wake latencies "
         "(consumer-wake-ns, producer-wake-ns) or the cache-miss term"},
        {"consumer-wake-ns", "2000", 0, 1e9, false, false, {}, "ns",
         "modelling choice: waking a sleeping NAPI consumer costs microseconds (docs/design.md §4)"},
        {"producer-wake-ns", "1000", 0, 1e9, false, false, {}, "ns",
         "modelling choice: restarting a stopped queue costs a softirq round (docs/design.md §4)"},
        {"poll-ns", "100", 0, 1e9, false, false, {}, "ns",
         "modelling choice: fixed cost of one NAPI poll"},
        {"pkt-bytes", "60", 1, 65536, true, false, {}, "bytes",
         "seed 001: 1086 Mb/s at 2,264,138 pps = 60 B (pktgen default)"},
        {"probe-interval-us", "10000", 1, 1e7, false, false, {}, "us",
         "modelling choice: a ping every 10 ms (ping -i 0.01) gives ~400 samples in 4 s"},
        {"tx-usecs", "100", 0, 1e7, false, false, {}, "us",
         "veth BQL v7 tx-usecs default 100 us (docs/references.md [VE8])"},
        {"fixed-limit", "8", 0, 1e6, true, true, {}, "packets",
         "veth limit_min=8 proposal, one cache line of pointers (docs/references.md [VE5][VE9]); "
         "a list gives one row per limit (fixed-8, fixed-64, ...)"},
        {"adversarial", "1", 0, 1, true, false, {}, "bool",
         "modelling choice: add the adversarial case (control half, then cheap bursts)"},
        {"adv-nrules", "1000", 0, 1000000, true, false, {}, "rules",
         "adversarial sweep point tx-usecs 100 / nrules 1000 (docs/references.md [VE11])"},
        {"cheap-ns", "200", 0, 1e9, false, false, {}, "ns",
         "XDP_DROP ~200 ns per packet (docs/references.md [VE10])"},
        {"burst-pkts", "128", 1, 1e7, true, false, {}, "packets",
         "modelling choice: a burst of 128 cheap packets (2x the NAPI budget)"},
        {"burst-period-us", "10000", 1, 1e8, false, false, {}, "us",
         "modelling choice: one cheap burst every 10 ms"},
        {"speed-cases", "0.5,1", 0, 100, false, true, {}, "x producer-ns",
         "modelling choice: extra nrules=0 cases with base-cost-ns at these multiples of "
         "producer-ns (consumer faster, balanced; the nrules cases are producer-faster), so the "
         "table shows the shape, not one point (0: no extra cases)"},
        {"wake-call-ns", "500", 0, 1e9, false, false, {}, "ns",
         "modelling choice: CPU the waking side spends (an IPI and a softirq raise to wake NAPI, "
         "__netif_schedule to restart the queue), sub-microsecond on current x86"},
        {"sleep-call-ns", "300", 0, 1e9, false, false, {}, "ns",
         "modelling choice: CPU of going idle and coming back (napi_complete_done and "
         "re-arming; netif_tx_stop_queue and pktgen's retry), a few hundred ns"},
        {"footprint-bytes", "320", 1, 1e9, false, false, {}, "bytes",
         "an skb (~232 B struct sk_buff on x86-64) plus a 60 B frame, rounded to cache lines"},
        {"sojourn-threshold-us", "5000", 0, 1e9, false, false, {}, "us",
         "CoDel's target delay, 5 ms (RFC 8289 section 4.4), fq_codel's default"},
    };
    p.insert(p.end(), own.begin(), own.end());
    const auto cache = cache_params();
    p.insert(p.end(), cache.begin(), cache.end());
    return p;
}

/// veth's completion choices (docs/design.md §4): the rows of a per-completion policy.
inline std::vector<completion_choice> completions() {
    return {
        {"item", completion_mode::per_item, "completion reported per packet (veth BQL v5)"},
        {"poll", completion_mode::per_poll, "completion reported once per NAPI poll"},
        {"time", completion_mode::timed,
         "completions coalesced for tx-usecs or > limit (veth BQL v7)"},
    };
}

inline std::vector<policy_row> rows(const param_lists& l) {
    return registry_rows(completions(), completion_mode::per_item, l);
}

/// One run's model state. Not copyable: the engine and policy live for the run.
class model {
public:
    model(const param_values& p, const policy_row& row) : p_(p), policy_name_(row.name) {
        auto get = [&](const char* n) { return p.at(n); };
        ring_cap_ = static_cast<std::size_t>(get("ring"));
        budget_ = static_cast<std::uint32_t>(get("budget"));
        producer_ns_ = get("producer-ns");
        cost_ns_ = get("base-cost-ns") + get("nrules") * get("rule-ns");
        jitter_ = get("jitter");
        consumer_wake_ns_ = static_cast<ns_t>(get("consumer-wake-ns"));
        producer_wake_ns_ = static_cast<ns_t>(get("producer-wake-ns"));
        poll_ns_ = static_cast<ns_t>(get("poll-ns"));
        pkt_bytes_ = static_cast<std::uint32_t>(get("pkt-bytes"));
        probe_interval_ns_ = get("probe-interval-us") * static_cast<double>(ns_per_us);
        end_ = static_cast<ns_t>(get("duration-ms")) * ns_per_ms;
        w_ = window{std::min<ns_t>(static_cast<ns_t>(get("warmup-ms")) * ns_per_ms, end_), end_};
        sample_ns_ = static_cast<ns_t>(get("sample-us")) * ns_per_us;
        adversarial_ = p.contains("adversarial-case") && p.at("adversarial-case") != 0;
        mid_ = w_.begin + (w_.end - w_.begin) / 2;
        cheap_ns_ = get("cheap-ns");
        burst_pkts_ = static_cast<std::uint64_t>(get("burst-pkts"));
        burst_period_ns_ = static_cast<ns_t>(get("burst-period-us") * static_cast<double>(ns_per_us));
        wake_call_ns_ = get("wake-call-ns");
        sleep_call_ns_ = get("sleep-call-ns");
        footprint_ = get("footprint-bytes");
        cache_bytes_ = get("cache-bytes");
        miss_ns_ = get("miss-ns");
        if (p.contains("speed-case")) cost_ns_ = get("speed-case") * producer_ns_;

        policy_ = make_policy(row, p);
        const auto window_ns = static_cast<ns_t>(get("tx-usecs") * static_cast<double>(ns_per_us));
        coalescer_ = completion_coalescer{row.completion, window_ns};
        // The levels measure over windows known only now.
        occupancy_ = level{w_};
        qdisc_level_ = level{w_};
        prod_ = side_books{w_};
        cons_ = side_books{w_};
        sojourn_ = sojourn_books{w_, static_cast<ns_t>(get("sojourn-threshold-us") * 1000.0)};
        policy_level_ = level{w_};
        limit_ = level{w_};
        limit_control_ = level{window{w_.begin, mid_}};
        limit_adv_ = level{window{mid_, w_.end}};
        if (auto l = policy_->limit()) {
            limit_.set(0, *l);
            limit_control_.set(0, *l);
            limit_adv_.set(0, *l);
        }
    }

    /// Test hook (tests/unit/lab_checks_test.cpp): the next report loses one unit on its way to
    /// the policy, as a completion path with a bookkeeping bug would. The policy's books stay
    /// self-consistent; only the "policy units" conservation check can see the loss.
    void plant_lost_completion() { lose_unit_ = true; }

    run_result run() {
        eng_.at(0, k_start_producer);
        eng_.at(0, k_sample);
        eng_.at(static_cast<ns_t>(probe_interval_ns_ / 2), k_probe);
        event e;
        while (eng_.next(e, end_)) dispatch(e);
        return finish();
    }

private:
    enum kind : std::uint32_t {
        k_start_producer, k_produced, k_producer_wake, k_consumer_wake, k_consume, k_probe, k_sample
    };
    enum class stop_reason : std::uint8_t { none, policy, ring_full };

    void dispatch(const event& e) {
        switch (e.kind) {
        case k_start_producer: start_producing(); break;
        case k_produced: produced(); break;
        case k_producer_wake: producer_woken(); break;
        case k_consumer_wake: start_poll(); break;
        case k_consume: consume(); break;
        case k_probe: probe(); break;
        case k_sample: take_sample(); break;
        default: break;
        }
    }

    [[nodiscard]] ns_t now() const noexcept { return eng_.now(); }
    [[nodiscard]] bool ring_full() const noexcept { return ring_.size() >= ring_cap_; }

    // ---- producer ------------------------------------------------------------------------

    void start_producing() {
        // The flood always has a packet waiting in the qdisc; a probe (a new flow) goes first.
        if (!flood_queued_) {
            enqueue(packet{.born = now(), .bytes = pkt_bytes_, .flow = 0});
            flood_queued_ = true;
        }
        packet pkt = *qdisc_.dequeue();
        qdisc_level_.set(now(), qdisc_.size());
        if (w_.contains(now())) qdisc_wait_.add(now() - pkt.born);
        qdisc_inside_ns_ += w_.overlap(pkt.born, now());
        if (pkt.flow == 0) flood_queued_ = false;
        pkt.cost_ns = jittered(rng_, packet_cost(pkt), jitter_);
        in_hand_ = pkt;
        holding_ = true;
        const ns_t c = jittered(rng_, producer_ns_, jitter_);
        prod_.busy(now(), c);
        eng_.after(c, k_produced);
    }

    void enqueue(const packet& pkt) {
        qdisc_.enqueue(pkt);
        ++generated_;
        if (pkt.probe) ++probes_sent_;
        qdisc_level_.set(now(), qdisc_.size());
    }

    double packet_cost(const packet& pkt) {
        if (!adversarial_ || now() < mid_ || pkt.probe) return cost_ns_;
        // Adversarial half: the first burst_pkts packets of every period are cheap.
        const std::uint64_t period = (now() - mid_) / burst_period_ns_;
        if (period != burst_period_) {
            burst_period_ = period;
            cheap_left_ = burst_pkts_;
        }
        if (cheap_left_ == 0) return cost_ns_;
        --cheap_left_;
        return cheap_ns_;
    }

    void produced() {
        packet pkt = in_hand_;
        holding_ = false;
        pkt.posted = now();
        ring_.push_back(pkt);
        ++posted_;
        policy_->queued(1, now());
        occupancy_.set(now(), ring_.size());
        policy_level_.set(now(), policy_->inflight());
        ns_t spent = 0; // the producer pays for waking the consumer
        if (consumer_ == consumer_state::sleeping) {
            consumer_ = consumer_state::waking;
            cons_.wake(now());
            spent = jittered(rng_, wake_call_ns_, jitter_);
            prod_.busy(now(), spent);
            eng_.after(after_sleep_call(consumer_wake_ns_, cons_back_from_), k_consumer_wake);
        }
        if (policy_->over_limit() || ring_full()) {
            stopped_ = policy_->over_limit() ? stop_reason::policy : stop_reason::ring_full;
            if (w_.contains(now())) ++stops_;
            prod_.sleep(now());
            const ns_t call = jittered(rng_, sleep_call_ns_, jitter_);
            prod_.busy(now() + spent, call);
            prod_back_from_ = now() + spent + call;
            return;
        }
        if (spent > 0)
            eng_.after(spent, k_start_producer);
        else
            start_producing();
    }

    /// The completion path wakes a queue the policy stopped; the end of a poll also wakes a
    /// queue stopped on a full ring (veth restarts its queue after consuming).
    /// Returns the CPU the consumer spent waking it (0: no wake-up).
    ns_t maybe_wake_producer(bool poll_end) {
        if (stopped_ == stop_reason::none || wake_pending_) return 0;
        if (stopped_ == stop_reason::ring_full && !poll_end) return 0;
        if (policy_->over_limit() || ring_full()) return 0;
        wake_pending_ = true;
        prod_.wake(now());
        const ns_t spent = jittered(rng_, wake_call_ns_, jitter_);
        cons_.busy(now(), spent);
        eng_.after(after_sleep_call(producer_wake_ns_, prod_back_from_), k_producer_wake);
        return spent;
    }

    void producer_woken() {
        wake_pending_ = false;
        if (policy_->over_limit() || ring_full()) return; // still stopped; a later wake retries
        stopped_ = stop_reason::none;
        start_producing();
    }

    // ---- consumer ------------------------------------------------------------------------

    void start_poll() {
        consumer_ = consumer_state::polling;
        polled_ = 0;
        cons_.busy(now(), poll_ns_);
        eng_.after(poll_ns_, k_consume);
    }

    void consume() {
        if (ring_.empty() || polled_ == budget_) {
            end_poll();
            return;
        }
        const packet pkt = ring_.front();
        const double held = static_cast<double>(ring_.size());
        ring_.pop_front();
        ++taken_;
        ++polled_;
        occupancy_.set(now(), ring_.size());
        if (w_.contains(now())) {
            ++departures_;
            if (pkt.probe) {
                probe_.add(now() - pkt.born);
                if (adversarial_) (now() < mid_ ? probe_control_ : probe_adv_).add(now() - pkt.born);
            }
        }
        sojourn_.add(now(), now() - pkt.posted);
        ring_inside_ns_ += w_.overlap(pkt.posted, now());
        if (pkt.probe) ++probes_done_;
        report(coalescer_.on_item(now(), policy_->limit()));
        const ns_t woke = maybe_wake_producer(false);
        // The packet's cost, plus misses once the ring's footprint outgrows the cache.
        const auto work = pkt.cost_ns + static_cast<ns_t>(std::llround(
                                            cache_miss_ns(held, footprint_, cache_bytes_, miss_ns_)));
        cons_.busy(now() + woke, work);
        eng_.after(woke + work, k_consume);
    }

    void end_poll() {
        report(coalescer_.on_poll_end(now(), ring_.empty() && held_by_policy()));
        const ns_t woke = maybe_wake_producer(true);
        if (polled_ == budget_ && !ring_.empty()) {
            // Budget used up: NAPI polls again without sleeping (after any wake call).
            if (woke > 0) {
                consumer_ = consumer_state::waking;
                eng_.after(woke, k_consumer_wake);
            } else {
                start_poll();
            }
            return;
        }
        consumer_ = consumer_state::sleeping;
        cons_.sleep(now());
        const ns_t call = jittered(rng_, sleep_call_ns_, jitter_);
        cons_.busy(now() + woke, call);
        cons_back_from_ = now() + woke + call;
    }

    // The producer is stopped and the policy would refuse it now: stopped by the policy, or
    // stopped by a full ring while the policy is over its limit too (software_limit gives room
    // in steps, so it can refuse with fewer than `limit` pending). maybe_wake_producer() will not
    // wake it until completions are reported. (Only a policy stop counted until a review of
    // 2026-12-05 found sw-time stalled for good behind a ring-full stop: 255 units held
    // unreported, the consumer asleep.)
    [[nodiscard]] bool held_by_policy() const {
        return stopped_ == stop_reason::policy ||
               (stopped_ == stop_reason::ring_full && policy_->over_limit());
    }

    // A woken side runs again after the wake-up latency, but not before the sleep call it was
    // charged when it went to sleep has ended: with a sleep call longer than the latency its
    // CPU would otherwise overlap the work that follows (CPU above wall time; found by a
    // parameter fuzz of the lab, 2026-12-05).
    [[nodiscard]] ns_t after_sleep_call(ns_t latency, ns_t back_from) const {
        const ns_t call_left = back_from > now() ? back_from - now() : 0;
        return latency > call_left ? latency : call_left;
    }

    void report(std::uint32_t n) {
        if (lose_unit_ && n > 0) {
            lose_unit_ = false;
            --n;
        }
        if (n == 0) return;
        policy_->completed(n, now());
        completed_units_ += n;
        policy_level_.set(now(), policy_->inflight());
        if (auto l = policy_->limit()) {
            limit_.set(now(), *l);
            if (adversarial_) {
                limit_control_.set(now(), *l);
                limit_adv_.set(now(), *l);
            }
        }
    }

    // ---- probe and sampling ----------------------------------------------------------------

    void probe() {
        enqueue(packet{.born = now(), .bytes = pkt_bytes_, .flow = 1, .probe = true});
        eng_.after(jittered(rng_, probe_interval_ns_, jitter_), k_probe);
    }

    void take_sample() {
        sample s;
        s.t_ms = static_cast<double>(now()) / static_cast<double>(ns_per_ms);
        if (auto l = policy_->limit()) s.limit = *l;
        s.inflight = static_cast<double>(ring_.size());
        s.policy_inflight = static_cast<double>(policy_->inflight());
        series_.push_back(s);
        eng_.after(sample_ns_, k_sample);
    }

    // ---- results -------------------------------------------------------------------------

    run_result finish() {
        occupancy_.finish(end_);
        qdisc_level_.finish(end_);
        policy_level_.finish(end_);
        limit_.finish(end_);
        limit_control_.finish(end_);
        limit_adv_.finish(end_);
        run_result r = blank_result();
        r.policy = policy_name_;
        r.series = std::move(series_);
        r.events = eng_.processed();
        const double secs = w_.seconds();
        const double pps = secs > 0 ? static_cast<double>(departures_) / secs : 0;
        const auto us = [](double ns) { return ns / 1000.0; };
        r.set("throughput_pps", pps);
        r.set("throughput_bps", pps * pkt_bytes_ * 8.0);
        r.set("inflight_mean", occupancy_.mean());
        r.set("inflight_p99", occupancy_.quantile(0.99));
        if (auto l = policy_->limit()) {
            r.set("limit_mean", limit_.mean());
            r.set("limit_final", *l);
        }
        report_costs(r, prod_, cons_, departures_, sojourn_);
        if (probe_.count() > 0) r.set("probe_p99_us", us(probe_.quantile(0.99)));
        r.set("producer_stops_per_s", static_cast<double>(stops_) / secs);
        r.set("cpu_util", static_cast<double>(cons_.cpu_ns) / static_cast<double>(w_.end - w_.begin));
        r.set("qdisc_mean", qdisc_level_.mean());
        r.set("qdisc_wait_mean_us", mean_us(qdisc_wait_));
        r.set("policy_inflight_mean", policy_level_.mean());
        if (adversarial_ && policy_->limit()) {
            r.set("limit_control_mean", limit_control_.mean());
            r.set("limit_adversarial_mean", limit_adv_.mean());
            r.set("limit_inflation", limit_control_.mean() > 0
                                         ? limit_adv_.mean() / limit_control_.mean()
                                         : std::optional<double>{});
        }
        if (adversarial_ && probe_control_.count() > 0 && probe_adv_.count() > 0) {
            r.set("probe_p99_control_us", us(probe_control_.quantile(0.99)));
            r.set("probe_p99_adversarial_us", us(probe_adv_.quantile(0.99)));
            r.set("probe_p99_inflation", probe_adv_.quantile(0.99) / probe_control_.quantile(0.99));
        }
        // Honesty: nothing created or lost, the policy's books match the ring's, Little's law.
        check_conservation(r, "packets", generated_, taken_,
                           ring_.size() + qdisc_.size() + (holding_ ? 1U : 0U));
        check_conservation(r, "policy units", posted_, completed_units_,
                           coalescer_.pending() + ring_.size());
        if (policy_->inflight() != static_cast<std::uint32_t>(posted_ - completed_units_))
            r.failures.emplace_back("policy inflight disagrees with posted - completed");
        // Little's law on each queue with every stay clipped to the window, those still inside at
        // its end included (check_little_clipped): exact for any window, so a short window no
        // longer fails it (it did with the mean sojourn of departures, before 2026-12-06).
        for (const packet& p : ring_) ring_inside_ns_ += w_.overlap(p.posted, end_);
        check_little_clipped(r, occupancy_.area(), ring_inside_ns_, w_, "ring");
        check_live(r, stopped_ != stop_reason::none && !wake_pending_ && ring_.empty() &&
                          consumer_ == consumer_state::sleeping);
        // The qdisc and the probes: nothing lost, and the qdisc's own Little's law (its mean
        // length against its packets' time in it).
        check_conservation(r, "qdisc", qdisc_.enqueued(), qdisc_.dequeued(), qdisc_.size());
        check_conservation(r, "probes", probes_sent_, probes_done_,
                           probes_inside());
        qdisc_.for_each([&](const packet& p) { qdisc_inside_ns_ += w_.overlap(p.born, end_); });
        check_little_clipped(r, qdisc_level_.area(), qdisc_inside_ns_, w_, "qdisc");
        return r;
    }

    enum class consumer_state : std::uint8_t { sleeping, waking, polling };

    [[nodiscard]] std::uint64_t probes_inside() const {
        std::uint64_t n = qdisc_.count_if([](const packet& p) { return p.probe; });
        for (const auto& p : ring_) n += p.probe ? 1U : 0U;
        return n + (holding_ && in_hand_.probe ? 1U : 0U);
    }

    param_values p_;
    std::string policy_name_;
    engine eng_;
    rng rng_{static_cast<std::uint64_t>(p_.at("seed"))};
    std::unique_ptr<sim_policy> policy_;
    completion_coalescer coalescer_{completion_mode::per_item};
    qdisc qdisc_{qdisc_kind::fq};
    std::deque<packet> ring_;

    std::size_t ring_cap_ = 256;
    std::uint32_t budget_ = 64, pkt_bytes_ = 60;
    double producer_ns_ = 0, cost_ns_ = 0, jitter_ = 0, probe_interval_ns_ = 0;
    double cheap_ns_ = 0, wake_call_ns_ = 0, sleep_call_ns_ = 0, footprint_ = 0, cache_bytes_ = 0;
    double miss_ns_ = 0;
    ns_t consumer_wake_ns_ = 0, producer_wake_ns_ = 0, poll_ns_ = 0, end_ = 0, sample_ns_ = 0;
    ns_t mid_ = 0, burst_period_ns_ = 1;
    window w_;
    bool adversarial_ = false;
    std::uint64_t burst_pkts_ = 0, burst_period_ = ~std::uint64_t{0}, cheap_left_ = 0;

    packet in_hand_{};
    bool holding_ = false, flood_queued_ = false, wake_pending_ = false;
    ns_t prod_back_from_ = 0, cons_back_from_ = 0; // when each side's last sleep call ends
    stop_reason stopped_ = stop_reason::none;
    consumer_state consumer_ = consumer_state::sleeping;
    std::uint32_t polled_ = 0;

    std::uint64_t generated_ = 0, posted_ = 0, taken_ = 0, completed_units_ = 0;
    bool lose_unit_ = false; // plant_lost_completion()
    std::uint64_t departures_ = 0, stops_ = 0;
    area_t ring_inside_ns_ = 0, qdisc_inside_ns_ = 0; // stays inside the window (Little's law)
    std::uint64_t probes_sent_ = 0, probes_done_ = 0;
    level occupancy_{w_}, qdisc_level_{w_}, policy_level_{w_}, limit_{w_};
    side_books prod_{w_}, cons_{w_};
    sojourn_books sojourn_{w_};
    level limit_control_{window{w_.begin, mid_}}, limit_adv_{window{mid_, w_.end}};
    histogram qdisc_wait_, probe_, probe_control_, probe_adv_;
    std::vector<sample> series_;
};

inline std::string case_label(const param_values& p) {
    // The exact value (shortest_text): with "%g", --speed-cases=1,1.0000001 gave two cases one
    // label, and the second run's CSV overwrote the first's (review 2026-12-05).
    if (p.contains("speed-case"))
        return "cost=" + shortest_text(p.at("speed-case")) + "x producer";
    const auto n = static_cast<long long>(p.at("nrules"));
    if (p.contains("adversarial-case") && p.at("adversarial-case") != 0)
        return "adversarial nrules=" + std::to_string(n);
    return "nrules=" + std::to_string(n);
}

/// The nrules cases, then the speed cases (nrules 0, base cost at multiples of the producer's),
/// then the adversarial case.
inline std::vector<param_values> cases(const std::vector<param_spec>& specs, const param_lists& l) {
    param_lists one = l;
    one["speed-cases"] = {0}; // a list of extra cases, not a dimension to multiply
    std::vector<param_values> out = cases_of(specs, one);
    if (out.empty()) return out;
    const param_values first = out.front();
    for (double x : l.at("speed-cases")) {
        if (x <= 0) continue;
        param_values sp = first;
        sp["nrules"] = 0;
        sp["speed-case"] = x;
        out.push_back(sp);
    }
    if (first.at("adversarial") != 0) {
        param_values adv = first;
        adv["nrules"] = adv.at("adv-nrules");
        adv["adversarial-case"] = 1;
        out.push_back(adv);
    }
    return out;
}

} // namespace lab::sim::veth
