// Scenario thread-ring: the simulated twin of `qlimits-lab pipeline`. A producer thread makes
// items (flood, bursts or paced, as the pipeline's patterns) and sends them through
// qlimits::channel's protocol into an SPSC ring; a consumer thread takes up to `batch` items at
// a time, reports them to the policy (per item or once per batch, at the moment it takes them,
// as channel::receive_batch does), wakes a producer that is due, then does `work-ns` of work per
// item. Either side sleeps on a futex when it cannot go on (producer: over the limit or ring
// full; consumer: ring empty) and is woken by the other, with the costs of costs.hpp.
//
// The defaults describe the development machine as `qlimits-lab calibrate` measured it (a
// 2-vCPU VM shared with other jobs); run calibrate on yours and pass what it prints, or use
// `qlimits-lab pipeline --compare-sim`, which does both.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "costs.hpp"
#include "engine.hpp"
#include "params.hpp"
#include "policy.hpp"
#include "registry.hpp"
#include "result.hpp"
#include "rng.hpp"
#include "scenario.hpp"
#include "stats.hpp"
#include "trace_workload.hpp"
#include "qlimits/capture/recorder.hpp"
#include "qlimits/adapters/channel.hpp"

namespace lab::sim::tring {

/// The workload, shared with `qlimits-lab pipeline` (the same names, defaults and sources).
inline std::vector<param_spec> workload_params() {
    return {
        {"pattern", "flood,bursts,paced", 0, 2, true, true, {"flood", "bursts", "paced"}, "",
         "flood like pktgen (seed 001); bursts; paced below the consumer's speed"},
        {"ring", "256", 2, 1048576, true, false, {}, "entries", "veth ptr_ring size, 256 (docs/design.md §4)"},
        {"batch", "64", 1, 4096, true, false, {}, "items", "NAPI budget 64 (docs/design.md §4)"},
        {"item-bytes", "64", 8, 65536, true, false, {}, "bytes",
         "modelling choice: one cache line of payload written by the producer, read by the consumer"},
        {"work-ns", "500", 0, 1e7, false, false, {}, "ns",
         "seed 001: ~442 ns per packet at nrules 0, rounded"},
        {"burst", "64", 1, 1e6, true, false, {}, "items", "modelling choice (bursts): one poll's worth"},
        {"burst-gap-us", "100", 0, 1e7, false, false, {}, "us",
         "modelling choice (bursts): veth tx-usecs 100 us (docs/references.md [VE8])"},
        {"rate", "1000000", 1, 1e9, false, false, {}, "items/s",
         "modelling choice (paced): 1 M items/s, below the default consumer's ~2 M/s"},
        {"sojourn-threshold-us", "100", 0, 1e9, false, false, {}, "us",
         "modelling choice: 100 us, veth's tx-usecs (docs/references.md [VE8]) as a sojourn budget"},
        {"fixed-limit", "8", 0, 1e6, true, true, {}, "items",
         "veth limit_min=8 proposal (docs/references.md [VE5][VE9]); a list gives one row per limit"},
    };
}

/// The machine: what `qlimits-lab calibrate` measures (defaults: its output on the development
/// machine, a 2-vCPU VM shared with three other build jobs, 2026-12-01; MODEL.md), and the
/// cache figures of common servers.
inline std::vector<param_spec> machine_params() {
    return {
        {"timer-slack-us", "50", 0, 1e6, false, false, {}, "us",
         "Linux default timer slack of a normal thread, 50 us (prctl(2) PR_SET_TIMERSLACK): a "
         "burst gap's sleep ends this late, +-10 %"},
        {"producer-ns", "105", 1, 1e9, false, false, {}, "ns",
         "calibrate, development machine: producer CPU per item (fill, stamp, send)"},
        {"consumer-item-ns", "100", 0, 1e9, false, false, {}, "ns",
         "calibrate, development machine: consumer CPU per item besides work-ns"},
        {"work-scale", "0.96", 0.1, 10, false, false, {}, "x",
         "calibrate, development machine: busy loop's real duration / requested (its loop "
         "ran 1-8 % short at 500 ns until 2026-12-06; about 1.00 since)"},
        {"wake-ns", "3700", 0, 1e9, false, false, {}, "ns",
         "calibrate, development machine: futex wake to the woken thread running"},
        {"wake-call-ns", "1800", 0, 1e9, false, false, {}, "ns",
         "calibrate, development machine: CPU of a futex wake with a waiter (waker pays)"},
        {"sleep-call-ns", "6800", 0, 1e9, false, false, {}, "ns",
         "calibrate, development machine: CPU of a futex sleep and its wake-up (sleeper pays); "
         "timed through std::atomic wait, which the channel does not use (MODEL.md: the "
         "channel's own calls, timed since 2026-12-03, gave 3800-4100 on a quiet machine)"},
        {"spin-ns", "0", 0, 1e9, false, false, {}, "ns",
         "the channel polls before it sleeps (a stopped producer 128 polls of the policy, a "
         "waiting side about 256 pauses of back-off; channel.hpp); a wake inside that window "
         "costs no system call and no latency. 0: calibrate does not measure it (MODEL.md: 2000 "
         "makes dql-item look free, which the real runs deny)"},
        {"barrier-ns", "360", 0, 1e9, false, false, {}, "ns",
         "calibrate, development machine: the channel's membarrier before the consumer sleeps, "
         "timed with no other thread running (MODEL.md: beside a running thread, as in the "
         "pipeline, 1090-1150 on a quiet machine since 2026-12-03)"},
        {"jitter", "0.1", 0, 0.9, false, false, {}, "fraction",
         "modelling choice, as veth-bql: +-10% uniform spread of every cost"},
    };
}

inline std::vector<param_spec> params() {
    std::vector<param_spec> p;
    for (param_spec s : common_params()) {
        if (s.name == "duration-ms") {
            s.def = "2000";
            s.source = "modelling choice: 1.5 s measured after warm-up, beside a 1 s pipeline "
                       "run; ~1.6 M items/s would make 5 s the costliest runs of run all";
        } else if (s.name == "warmup-ms") {
            s.def = "500";
            s.source = "modelling choice: DQL's limit settles within its first hold time here";
        }
        p.push_back(s);
    }
    for (auto* part : {workload_params, machine_params, cache_params}) {
        const auto more = part();
        p.insert(p.end(), more.begin(), more.end());
    }
    return p;
}

/// The pipeline's completion modes (channel::receive_batch): per item or once per batch.
inline std::vector<completion_choice> completions() {
    return {{"item", completion_mode::per_item, "completion per item (veth BQL v5)"},
            {"batch", completion_mode::per_poll, "completion once per consumer batch (docs/design.md §4)"}};
}

inline std::vector<policy_row> rows(const param_lists& l) {
    return registry_rows(completions(), completion_mode::per_poll, l);
}

/// How a captured workload is replayed (qlimits-lab whatif): the producer as a closed loop
/// (it stalls while stopped, as pktgen does; each item follows the previous send by its
/// captured think time) or an open one (items arrive at their captured times and wait upstream
/// while the producer is stopped).
enum class trace_source : std::uint8_t { closed, open };

class model {
public:
    model(const param_values& p, const policy_row& row) : model(p, row, nullptr) {}
    /// With `trace`, the producer's and the consumer's own work come from a captured workload
    /// (pattern, work-ns and the producer's cost are then unused); with `record`, the run is
    /// written to a capture_log as a real one would be (times in simulated ns).
    model(const param_values& p, const policy_row& row, const trace_workload* trace,
          trace_source source = trace_source::closed, qlimits::capture_log* record = nullptr)
        : p_(p), name_(row.name), trace_(trace), open_(source == trace_source::open),
          rec_(record) {
        if (trace_ != nullptr && trace_->size() == 0) trace_ = nullptr;
        if (trace_ != nullptr)
            traced_overhead_ = consumer_overhead(*trace_, p.at("wake-ns"), p.at("wake-call-ns"))
                                   .value_or(p.at("consumer-item-ns"));
        auto get = [&](const char* n) { return p.at(n); };
        pattern_ = static_cast<int>(get("pattern"));
        ring_cap_ = static_cast<std::size_t>(get("ring"));
        batch_ = static_cast<std::size_t>(get("batch"));
        item_bytes_ = get("item-bytes");
        work_ns_ = get("work-ns") * get("work-scale");
        burst_ = static_cast<std::uint64_t>(get("burst"));
        burst_gap_ns_ = get("burst-gap-us") * 1000.0;
        slack_ns_ = get("timer-slack-us") * 1000.0;
        gap_ns_ = 1e9 / get("rate");
        producer_ns_ = get("producer-ns");
        consumer_item_ns_ = get("consumer-item-ns");
        wake_ns_ = get("wake-ns");
        wake_call_ns_ = get("wake-call-ns");
        sleep_call_ns_ = get("sleep-call-ns");
        spin_ns_ = static_cast<ns_t>(get("spin-ns"));
        barrier_ns_ = get("barrier-ns");
        cache_bytes_ = get("cache-bytes");
        miss_ns_ = get("miss-ns");
        jitter_ = get("jitter");
        end_ = static_cast<ns_t>(get("duration-ms")) * ns_per_ms;
        w_ = window{std::min<ns_t>(static_cast<ns_t>(get("warmup-ms")) * ns_per_ms, end_), end_};
        sample_ns_ = static_cast<ns_t>(get("sample-us")) * ns_per_us;
        per_item_ = row.completion == completion_mode::per_item;
        policy_ = make_policy(row, p);
        occupancy_ = level{w_};
        limit_ = level{w_};
        prod_ = side_books{w_};
        cons_ = side_books{w_};
        sojourn_ = sojourn_books{w_, static_cast<ns_t>(get("sojourn-threshold-us") * 1000.0)};
        if (auto l = policy_->limit()) limit_.set(0, *l);
    }

    run_result run() {
        eng_.at(0, k_sample);
        next_item();
        consumer_take(); // the consumer's first receive finds the ring empty and sleeps
        event e;
        while (eng_.next(e, end_)) dispatch(e);
        return finish();
    }

private:
    enum kind : std::uint32_t { k_next, k_produced, k_producer_wake, k_consumer_wake, k_taken, k_sample };
    enum class producer_state : std::uint8_t { running, stopped, waiting_room, woken };

    void dispatch(const event& e) {
        switch (e.kind) {
        case k_next: next_item(); break;
        case k_produced: produced(); break;
        case k_producer_wake: producer_woken(); break;
        case k_consumer_wake: consumer_take(); break;
        case k_taken: consumer_take(); break;
        case k_sample: take_sample(); break;
        default: break;
        }
    }
    [[nodiscard]] ns_t now() const noexcept { return eng_.now(); }
    ns_t cost(double ns) { return jittered(rng_, ns, jitter_); }

    // ---- producer ------------------------------------------------------------------------

    /// The pipeline's producer loop: wait as the pattern says, then make one item.
    void next_item() {
        if (trace_ != nullptr) {
            next_traced();
            return;
        }
        if (pattern_ == 1 && seq_ > 0 && seq_ % burst_ == 0 && gapped_ != seq_) {
            gapped_ = seq_; // sleep_for(burst-gap): idle, ends late by up to the timer slack
            eng_.after(static_cast<ns_t>(burst_gap_ns_) + cost(slack_ns_), k_next);
            return;
        }
        ns_t start = now();
        if (pattern_ == 2) {
            due_ += gap_ns_; // the pipeline spins until the item is due: CPU, not sleep
            if (due_ > static_cast<double>(start)) {
                const auto spin = static_cast<ns_t>(due_ - static_cast<double>(start));
                prod_.busy(start, spin);
                start += spin;
            }
        }
        const ns_t c = cost(producer_ns_);
        prod_.busy(start, c);
        eng_.at(start + c, k_produced);
    }

    /// The next captured item: closed loop, the producer's own time since the last send
    /// (think) then the send's lead-in; open loop, the item's arrival (the producer takes it
    /// when free), its cost, then the lead-in. A trace shorter than the run repeats.
    void next_traced() {
        const std::size_t n = trace_->size();
        const std::size_t i = static_cast<std::size_t>(made_ % n);
        ns_t start = now();
        if (open_) {
            traced_ready_ = trace_->arrival[i] + (made_ / n) * trace_->period;
            if (traced_ready_ > start) {
                eng_.at(traced_ready_, k_next); // idle until it arrives
                return;
            }
            const ns_t c = cost(producer_ns_);
            prod_.busy(start, c);
            start += c;
        } else {
            traced_ready_ = start + trace_->think[i];
            prod_.busy(start, std::min<ns_t>(cost(producer_ns_), trace_->think[i] + trace_->send_pre));
            // At least 1 ns an item, as whatif's event estimate assumes: a capture with no think
            // time and no send time (and a consumer that costs nothing) replayed at one instant
            // for ever (a whatif fuzz, 2026-12-06).
            start = std::max(traced_ready_, now() + (trace_->send_pre == 0 ? 1 : 0));
        }
        eng_.at(start + trace_->send_pre, k_produced);
    }

    void produced() {
        if (!holding_) {
            holding_ = true;
            ready_ = trace_ != nullptr ? std::min(traced_ready_, now()) : now();
            held_ix_ = made_;
            held_units_ = trace_ != nullptr ? trace_->units[made_ % trace_->size()] : 1;
            ++made_;
        }
        try_send();
    }

    /// channel::send: admit (the policy), push (the ring), count, ring the consumer's doorbell.
    void try_send() {
        const bool limit = held_back();
        if (limit || ring_.size() >= ring_cap_) {
            if (limit && w_.contains(now())) ++stops_;
            state_ = limit ? producer_state::stopped : producer_state::waiting_room;
            prod_.sleep(now());
            prod_since_ = now();
            return;
        }
        state_ = producer_state::running;
        if (w_.contains(now())) send_wait_.add(now() - ready_);
        ring_.push_back({now(), held_ix_, held_units_});
        holding_ = false;
        ++seq_;
        units_in_ += held_units_;
        policy_->queued(held_units_, now());
        if (rec_ != nullptr) {
            rec_->wanted(ready_);
            rec_->entered(held_units_, now());
        }
        occupancy_.set(now(), ring_.size());
        ns_t spent = 0;
        if (consumer_asleep_) {
            consumer_asleep_ = false;
            spent = wake_consumer();
            consumer_slept_ = woke_sleeper_;
            prod_.busy(now(), spent);
        }
        const ns_t tail = trace_ != nullptr ? trace_->send_post : 0;
        if (rec_ != nullptr) rec_->sent(now() + spent + tail);
        eng_.after(spent + tail, k_next);
    }

    void producer_woken() {
        state_ = producer_state::running;
        try_send();
    }

    // ---- consumer ------------------------------------------------------------------------

    /// channel::receive_batch: take what is there (up to batch), complete it, wake the
    /// producer if due, then do the work; or sleep on an empty ring.
    void consumer_take() {
        if (ring_.empty()) {
            // channel: the back-off's polls first (spin-ns), then the flag that it sleeps, the
            // fence, and the futex wait. With no spin the fence follows at once (its cost drawn
            // now, as ever); after a spin only if no item came (wake_consumer()).
            consumer_asleep_ = true;
            cons_.sleep(now());
            cons_since_ = now();
            if (spin_ns_ == 0) {
                const ns_t fence = cost(barrier_ns_);
                cons_.busy(now(), fence);
                cons_fence_end_ = now() + fence;
            }
            return;
        }
        if (consumer_slept_) {
            // channel times its futex wait (from the end of its fence to its return) and tells
            // the policy (qlimits::accepts_consumer_idle) before the take that follows.
            consumer_slept_ = false;
            policy_->consumer_idle(now() > cons_fence_end_ ? now() - cons_fence_end_ : 0);
        }
        const std::size_t n = std::min(batch_, ring_.size());
        const double held = static_cast<double>(ring_.size());
        std::uint32_t units = 0;
        bool reported = false; // a part of this take was reported
        taking_.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const slot s = ring_.front();
            sojourn_.add(now(), now() - s.entered);
            residence_ns_ += w_.overlap(s.entered, now());
            ring_.pop_front();
            taking_.push_back(s.ix);
            ++taken_;
            if (w_.contains(now())) ++departures_;
            units += s.units;
            // Later parts of a take are those after a part reported (zero-unit items report
            // nothing), as channel's receive_batch.
            if (per_item_) {
                complete(s.units, reported);
                reported = reported || s.units != 0;
            }
        }
        if (!per_item_) complete(units, false);
        occupancy_.set(now(), ring_.size());
        ns_t t = 0;
        if (producer_due()) {
            // channel stores a producer stopped by the limit as such at once, and one refused by
            // a full ring only after its back-off's polls: a wake of that one within them is
            // none (wake_producer() finds it running).
            const bool counted = state_ == producer_state::stopped ||
                                 now() >= prod_since_ + spin_ns_;
            state_ = producer_state::woken;
            if (counted) prod_.wake(now());
            t = wake(prod_, prod_since_, k_producer_wake);
            // channel times its wake call (the system call only, not a spinning producer's
            // wake-up) and tells the policy (qlimits::accepts_wake_call).
            if (woke_sleeper_) policy_->wake_call(t);
        }
        const double miss = cache_miss_ns(held, item_bytes_, cache_bytes_, miss_ns_);
        // The consumer's own work: captured per item, or work-ns; a recording counts only that
        // share of each item's cost (the rest is the channel's, which a replay adds again).
        const ns_t start = t;
        double own = 0;
        for (const std::uint64_t ix : taking_) {
            if (trace_ != nullptr) {
                const double w = trace_->service[ix % trace_->size()];
                t += static_cast<ns_t>(w) + cost(traced_overhead_ + miss);
                own += w;
            } else {
                const ns_t c = cost(work_ns_ + consumer_item_ns_ + miss);
                t += c;
                own += static_cast<double>(c) * work_ns_ / (work_ns_ + consumer_item_ns_ + miss);
            }
        }
        if (rec_ != nullptr)
            rec_->served(static_cast<std::uint32_t>(n), now() + start,
                         now() + start + static_cast<ns_t>(own));
        cons_.busy(now(), t);
        eng_.after(t, k_taken);
    }

    /// A push found the consumer on its way to sleep (consumer_take()); returns the pusher's CPU
    /// for the wake call. Within the spin the consumer is still polling: it takes the item at
    /// once, and the channel counts nothing (its flag is not stored yet). Past it the flag is
    /// stored (a wake-up counted, as channel's consumer_wakeups) and the fence runs: within the
    /// fence the wake is cheap, past it a futex wake (wake()).
    ns_t wake_consumer() {
        const ns_t spin_end = cons_since_ + spin_ns_;
        if (spin_ns_ != 0) {
            if (now() < spin_end) {
                woke_sleeper_ = false;
                cons_.busy(cons_since_, now() - cons_since_);
                eng_.at(now(), k_consumer_wake);
                return 0;
            }
            cons_fence_end_ = charge_consumer_spin();
        }
        cons_.wake(now());
        return wake(cons_, cons_fence_end_, k_consumer_wake, 0);
    }

    /// The consumer's way to sleep after its spin: the whole spin, then the fence; returns the
    /// fence's end. (The spin went uncharged until a review of 2026-12-05: --spin-ns=1000000
    /// showed the consumer's CPU of --spin-ns=0.)
    ns_t charge_consumer_spin() {
        cons_.busy(cons_since_, spin_ns_);
        const ns_t spin_end = cons_since_ + spin_ns_;
        const ns_t fence = cost(barrier_ns_);
        cons_.busy(spin_end, fence);
        return spin_end + fence;
    }

    /// Wake `sleeper` (waiting since `since`); returns the waker's CPU for the wake call (the
    /// caller charges it). Inside the fence the consumer runs on its way to sleep (`since` is
    /// then still ahead) or inside a spin window after `since` (the producer's; the consumer's
    /// comes before its fence, wake_consumer()), the sleeper has not reached the
    /// futex: it sees the change at its next check and goes on, and nobody makes a system call
    /// (channel's waker calls futex wake only when a thread waits in it). Past both, the
    /// sleeper runs again wake-ns later and first pays its sleep call (the wait system call and
    /// the switches, counted when it is back on a CPU).
    ns_t wake(side_books& sleeper, ns_t since, kind resume) { return wake(sleeper, since, resume, spin_ns_); }
    /// The same with the sleeper's spin after `since` given (the consumer's comes before its
    /// fence: wake_consumer()).
    ns_t wake(side_books& sleeper, ns_t since, kind resume, ns_t spin) {
        const ns_t waited = now() > since ? now() - since : 0;
        // Not `waited >= spin_ns_` alone: with no spin (spin-ns 0, the default) a push inside
        // the fence was a full sleep and wake-up from the push on, so the consumer ran again
        // before its fence's CPU had ended (cpu_util 5.26 with a 100 us fence; a parameter
        // fuzz of the lab, 2026-12-05).
        woke_sleeper_ = now() >= since && waited >= spin;
        if (!woke_sleeper_) {
            sleeper.busy(since, waited);
            // Still inside the fence it runs on its way to sleep (`since` is its end): it finds
            // the item at the re-check after that fence, not before (engine::at() runs a time
            // already past at once). Resumed at once, its next work overlapped the fence's CPU
            // (a consumer sleeping after every item showed 2.98x the wall time in CPU; a
            // parameter fuzz of the lab, 2026-12-05).
            eng_.at(since, resume);
            return 0;
        }
        sleeper.busy(since, spin);
        const ns_t back = now() + cost(wake_ns_);
        const ns_t switched = cost(sleep_call_ns_);
        sleeper.busy(back, switched);
        eng_.at(back + switched, resume);
        return cost(wake_call_ns_);
    }

    // Over the policy's limit, or the channel's books full: channel keeps at most 2^31 - 1 units
    // in flight (over_limit past it), so 32-bit policy counters and a take's 32-bit sum of
    // units never wrap (captured items of up to 2^28 - 1 units each through a 256-slot ring
    // would).
    [[nodiscard]] bool held_back() const {
        return policy_->over_limit() ||
               units_in_ - completed_ + held_units_ > qlimits::channel_max_inflight_units;
    }

    [[nodiscard]] bool producer_due() const {
        if (state_ == producer_state::waiting_room) return true;
        return state_ == producer_state::stopped && !held_back();
    }

    // Reported as channel::receive_batch reports a take (sim_policy::taken: software_limit's
    // on_taken, told the units come before the work; the time read only when the policy asks);
    // per item, the items after the first are parts of that take.
    void complete(std::uint32_t n, bool same_take) {
        if (n == 0) return; // nothing counted was taken: channel reports nothing either
        const auto read = [](const void* self) noexcept {
            return static_cast<const model*>(self)->now();
        };
        policy_->taken(n, read, this, same_take);
        if (rec_ != nullptr) rec_->completed(n, now());
        completed_ += n;
        if (auto l = policy_->limit()) limit_.set(now(), *l);
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

    run_result finish() {
        occupancy_.finish(end_);
        limit_.finish(end_);
        run_result r = blank_result();
        r.policy = name_;
        r.series = std::move(series_);
        r.events = eng_.processed();
        const double secs = w_.seconds();
        const double pps = static_cast<double>(departures_) / secs;
        r.set("throughput_pps", pps);
        r.set("throughput_bps", pps * item_bytes_ * 8.0);
        r.set("inflight_mean", occupancy_.mean());
        r.set("inflight_p99", occupancy_.quantile(0.99));
        if (auto l = policy_->limit()) {
            r.set("limit_mean", limit_.mean());
            r.set("limit_final", *l);
        }
        // A consumer still asleep at the end has spun (and fenced after the spin) as
        // wake_consumer() charges at a wake-up; busy() counts what lies in the window.
        if (consumer_asleep_ && spin_ns_ != 0) (void)charge_consumer_spin();
        report_costs(r, prod_, cons_, departures_, sojourn_);
        r.set("producer_stops_per_s", static_cast<double>(stops_) / secs);
        r.set("cpu_util", static_cast<double>(cons_.cpu_ns) / static_cast<double>(w_.end - w_.begin));
        r.set("send_wait_mean_us", mean_us(send_wait_));
        r.set("send_wait_p99_us", quantile_us(send_wait_, 0.99));
        check_conservation(r, "items", made_, taken_, ring_.size() + (holding_ ? 1U : 0U));
        std::uint64_t ring_units = 0;
        for (const slot& s : ring_) ring_units += s.units;
        check_conservation(r, "policy units", units_in_, completed_, ring_units);
        if (policy_->inflight() != static_cast<std::uint32_t>(units_in_ - completed_))
            r.failures.emplace_back("policy inflight disagrees with sent - completed");
        // Little's law with each item's stay clipped to the window (check_little_clipped). With
        // the departures' mean sojourn instead (before 2026-12-06), a whatif replay whose ring
        // was still filling at the window's end failed by 14 % (CI: a capture with a 1.7 ms
        // consumer stall).
        for (const slot& s : ring_) residence_ns_ += w_.overlap(s.entered, end_);
        check_little_clipped(r, occupancy_.area(), residence_ns_, w_);
        // (A woken producer has its wake-up on its way.)
        const bool stopped =
            state_ == producer_state::stopped || state_ == producer_state::waiting_room;
        check_live(r, stopped && consumer_asleep_ && ring_.empty());
        return r;
    }

    param_values p_;
    std::string name_;
    engine eng_;
    rng rng_{static_cast<std::uint64_t>(p_.at("seed"))};
    std::unique_ptr<sim_policy> policy_;
    struct slot {
        ns_t entered;       ///< ring-entry time
        std::uint64_t ix;   ///< the item's number (its captured work, when replaying)
        std::uint32_t units;
    };
    std::deque<slot> ring_;
    std::vector<std::uint64_t> taking_; ///< the items of the batch being taken
    const trace_workload* trace_ = nullptr;
    bool open_ = false;
    qlimits::capture_log* rec_ = nullptr;
    ns_t traced_ready_ = 0;
    double traced_overhead_ = 0; ///< the consumer's cost per item besides the captured work
    std::uint64_t held_ix_ = 0, units_in_ = 0;
    std::uint32_t held_units_ = 1;
    int pattern_ = 0;
    std::size_t ring_cap_ = 256, batch_ = 64;
    double item_bytes_ = 64, work_ns_ = 0, burst_gap_ns_ = 0, slack_ns_ = 0, gap_ns_ = 0;
    double producer_ns_ = 0, consumer_item_ns_ = 0, wake_ns_ = 0, wake_call_ns_ = 0;
    double sleep_call_ns_ = 0, barrier_ns_ = 0, cache_bytes_ = 0, miss_ns_ = 0, jitter_ = 0, due_ = 0;
    std::uint64_t burst_ = 64, gapped_ = 0;
    ns_t end_ = 0, sample_ns_ = 0, ready_ = 0, spin_ns_ = 0, prod_since_ = 0, cons_since_ = 0;
    area_t residence_ns_ = 0; // time items spent in the ring inside the window (Little's law)
    ns_t cons_fence_end_ = 0; // when the consumer's fence before its sleep ends (consumer_take())
    window w_;
    bool per_item_ = false, holding_ = false, consumer_asleep_ = false;
    bool woke_sleeper_ = false; // the last wake() made the system call
    bool consumer_slept_ = false; // the consumer's next take ends a futex wait
    producer_state state_ = producer_state::running;

    std::uint64_t made_ = 0, seq_ = 0, taken_ = 0, completed_ = 0, departures_ = 0, stops_ = 0;
    level occupancy_{w_}, limit_{w_};
    side_books prod_{w_}, cons_{w_};
    sojourn_books sojourn_{w_};
    histogram send_wait_;
    std::vector<sample> series_;
};

inline std::string case_label(const param_values& p) {
    static const char* const names[] = {"flood", "bursts", "paced"};
    return names[static_cast<std::size_t>(p.at("pattern"))];
}

} // namespace lab::sim::tring
