// Scenario virtio-bql (seed 000): 50 bulk TCP flows and one request/response flow share 1, 2 or
// 4 TX queues of a virtio-net device. Each queue has a qdisc (FIFO like pfifo_fast, or fair like
// fq_codel) above a 256-descriptor ring that the device drains at line rate; finished buffers are
// reclaimed by a completion interrupt that is coalesced in time and frames.
//
// What bounds the backlog is TCP, not the ring: a bulk flow keeps at most tsq-skbs buffers below
// the socket (TCP Small Queues), released when the device's completion frees them. So the same
// bytes sit either in the ring, where every packet waits behind them, or in the qdisc, where a
// fair qdisc lets the request/response flow pass them. That is the mechanism the seed measures.
//
// Components: bulk sources (TSQ-limited) and a request/response source -> qdisc -> producer
// (the qdisc run: stops on the policy or a full ring) -> device ring (line rate) -> completion
// interrupt (coalesced) -> policy, and freed TSQ credit back to the flows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "engine.hpp"
#include "params.hpp"
#include "policy.hpp"
#include "qdisc.hpp"
#include "result.hpp"
#include "rng.hpp"
#include "scenario.hpp"
#include "stats.hpp"

namespace lab::sim::virtio {

inline std::vector<param_spec> params() {
    std::vector<param_spec> p = common_params();
    const std::vector<param_spec> own{
        {"qdisc", "fq,fifo", 0, 1, true, true, {"fq", "fifo"}, "",
         "seed 000: fq_codel (FQC) and pfifo_fast (PFF)"},
        {"queues", "1,2,4", 1, 64, true, true, {}, "queues", "seed 000: 1, 2 and 4 queues"},
        {"bulk-flows", "50", 0, 10000, true, false, {}, "flows",
         "seed 000: 'super netperf with 50 threads' in the background"},
        {"gbps", "10", 0.001, 1000, false, false, {}, "Gbit/s per queue",
         "modelling choice: a vhost worker per queue moving ~10 Gbit/s"},
        {"ring", "256", 1, 65536, true, false, {}, "descriptors",
         "virtio-net default queue size, 256 (docs/design.md §7)"},
        {"gso-bytes", "65536", 64, 262144, true, false, {}, "bytes",
         "64 KB TSO/GSO buffers, one descriptor each (docs/references.md [T1])"},
        {"tsq-skbs", "2", 1, 1000, true, false, {}, "buffers",
         "TCP Small Queues: 'two are in flight' per socket (docs/references.md [T1])"},
        {"rr-bytes", "66", 1, 65536, true, false, {}, "bytes",
         "modelling choice: netperf TCP_RR 1-byte request plus headers"},
        {"rtt-us", "257", 0, 1e7, false, false, {}, "us",
         "seed 000: ping between the two VMs, rtt avg 0.257 ms"},
        {"rtt-mdev-us", "24", 0, 1e7, false, false, {}, "us",
         "seed 000: the same ping's mdev 0.024 ms (min/max 0.233/0.300 ms); each response waits "
         "rtt-us plus a uniform draw with this standard deviation"},
        {"jitter", "0.1", 0, 0.9, false, false, {}, "fraction",
         "modelling choice, as veth-bql: +-10% uniform spread of each buffer's wire time (the "
         "vhost worker's pace) and of each interrupt's coalescing delay"},
        {"tx-usecs", "8", 0, 1e7, false, false, {}, "us",
         "net_dim TX EQE default profile (index 1): 8 us (docs/references.md [D2])"},
        {"tx-frames", "128", 1, 65536, true, false, {}, "frames",
         "net_dim TX EQE default profile (index 1): 128 frames (docs/references.md [D2])"},
        {"fixed-limit", "131072", 0, 1879048192, true, true, {}, "bytes",
         "modelling choice: 128 KB, the original TSQ budget (docs/references.md [T1]); a list "
         "gives one row per limit"},
    };
    p.insert(p.end(), own.begin(), own.end());
    return p;
}

/// One completion mode: the TX interrupt reports everything it reclaimed in one call.
inline std::vector<policy_row> rows(const param_lists& l) {
    return registry_rows({{"irq", completion_mode::per_poll,
                           "bytes, one completion per TX interrupt (BQL)"}},
                         completion_mode::per_poll, l);
}

class model {
public:
    model(const param_values& p, const policy_row& row) : p_(p), policy_name_(row.name) {
        auto get = [&](const char* n) { return p.at(n); };
        const auto nq = static_cast<std::size_t>(get("queues"));
        kind_ = get("qdisc") == 0 ? qdisc_kind::fq : qdisc_kind::fifo;
        bulk_ = static_cast<std::uint32_t>(get("bulk-flows"));
        ns_per_byte_ = 8.0 / get("gbps"); // Gbit/s = bits per ns
        ring_cap_ = static_cast<std::size_t>(get("ring"));
        gso_ = static_cast<std::uint32_t>(get("gso-bytes"));
        tsq_ = static_cast<std::uint32_t>(get("tsq-skbs"));
        rr_bytes_ = static_cast<std::uint32_t>(get("rr-bytes"));
        rtt_ns_ = static_cast<ns_t>(get("rtt-us") * static_cast<double>(ns_per_us));
        rtt_half_width_ns_ = get("rtt-mdev-us") * 1000.0 * std::sqrt(3.0); // uniform: sd = w/sqrt(3)
        jitter_ = get("jitter");
        irq_delay_ns_ = static_cast<ns_t>(get("tx-usecs") * static_cast<double>(ns_per_us));
        irq_frames_ = static_cast<std::size_t>(get("tx-frames"));
        end_ = static_cast<ns_t>(get("duration-ms")) * ns_per_ms;
        w_ = window{std::min<ns_t>(static_cast<ns_t>(get("warmup-ms")) * ns_per_ms, end_), end_};
        sample_ns_ = static_cast<ns_t>(get("sample-us")) * ns_per_us;

        for (std::size_t q = 0; q < nq; ++q) {
            auto t = std::make_unique<txq>(kind_, w_);
            t->pol = make_policy(row, p, true, get("gso-bytes"));
            if (auto l = t->pol->limit()) t->limit.set(0, *l);
            queues_.push_back(std::move(t));
        }
        // Flows are spread over the queues by a hash of their ports: a seeded draw here.
        flow_queue_.resize(bulk_ + 1);
        for (auto& fq : flow_queue_) fq = static_cast<std::uint32_t>(rng_.below(nq));
        below_.assign(bulk_ + 1, 0);
    }

    run_result run() {
        eng_.at(0, k_start);
        eng_.at(0, k_sample);
        event e;
        while (eng_.next(e, end_)) dispatch(e);
        return finish();
    }

private:
    // k_irq + q is queue q's interrupt, its argument the generation (32 bits: queue and
    // generation shared one argument, 16 bits each, and a stale timer could match again after
    // 65536 generations; a review, 2026-12-05). Queues are at most 64.
    enum kind : std::uint32_t { k_start, k_tx_done, k_rr_response, k_sample, k_irq };
    enum class stop_reason : std::uint8_t { none, policy, ring_full };

    struct txq {
        txq(qdisc_kind k, window w) : qd(k), occupancy(w), limit(w) {}
        qdisc qd;
        std::unique_ptr<sim_policy> pol;
        std::deque<packet> waiting; ///< posted, not yet on the wire
        std::deque<packet> used;    ///< sent, waiting for the completion interrupt
        packet on_wire{};
        bool tx_busy = false;
        stop_reason stopped = stop_reason::none;
        bool irq_armed = false;
        std::uint32_t irq_gen = 0; ///< an interrupt event is stale if its generation moved on
        std::uint64_t held_bytes = 0;
        level occupancy, limit;
        [[nodiscard]] std::size_t slots() const noexcept {
            return waiting.size() + used.size() + (tx_busy ? 1U : 0U);
        }
    };

    void dispatch(const event& e) {
        switch (e.kind) {
        case k_start: start(); break;
        case k_tx_done: tx_done(e.arg); break;
        case k_rr_response: rr_response(); break;
        case k_sample: take_sample(); break;
        default:
            if (e.kind >= k_irq) irq(e.kind - k_irq, e.arg);
            break;
        }
    }
    [[nodiscard]] ns_t now() const noexcept { return eng_.now(); }
    [[nodiscard]] std::uint32_t rr_flow() const noexcept { return bulk_; }

    void start() {
        for (std::uint32_t f = 0; f < bulk_; ++f)
            for (std::uint32_t i = 0; i < tsq_; ++i) send(f);
        send(rr_flow());
        for (std::uint32_t q = 0; q < queues_.size(); ++q) run_queue(q);
    }

    /// A flow hands one buffer to its queue's qdisc.
    void send(std::uint32_t flow) {
        const bool rr = flow == rr_flow();
        queues_[flow_queue_[flow]]->qd.enqueue(
            packet{.born = now(), .bytes = rr ? rr_bytes_ : gso_, .flow = flow, .probe = rr});
        ++below_[flow];
        ++generated_;
    }

    /// The qdisc run: move packets into the ring until the queue is stopped or the qdisc empty.
    void run_queue(std::uint32_t q) {
        txq& t = *queues_[q];
        while (t.stopped == stop_reason::none && !t.qd.empty()) {
            packet pkt = *t.qd.dequeue();
            pkt.posted = now();
            t.waiting.push_back(pkt);
            t.held_bytes += pkt.bytes;
            posted_bytes_ += pkt.bytes;
            t.pol->queued(pkt.bytes, now());
            t.occupancy.set(now(), t.slots());
            if (!t.tx_busy) start_tx(q);
            if (t.pol->over_limit() || t.slots() >= ring_cap_) {
                t.stopped = t.pol->over_limit() ? stop_reason::policy : stop_reason::ring_full;
                if (w_.contains(now())) ++stops_;
            }
        }
    }

    void start_tx(std::uint32_t q) {
        txq& t = *queues_[q];
        t.on_wire = t.waiting.front();
        t.waiting.pop_front();
        t.tx_busy = true;
        const ns_t d = jittered(rng_, static_cast<double>(t.on_wire.bytes) * ns_per_byte_, jitter_);
        link_busy_ns_ += w_.overlap(now(), now() + d);
        eng_.after(d == 0 ? 1 : d, k_tx_done, q);
    }

    void tx_done(std::uint32_t q) {
        txq& t = *queues_[q];
        t.tx_busy = false;
        t.used.push_back(t.on_wire);
        if (t.on_wire.probe) {
            if (w_.contains(now())) rr_delay_.add(now() - t.on_wire.born);
            const double rtt = static_cast<double>(rtt_ns_) +
                               rng_.uniform(-rtt_half_width_ns_, rtt_half_width_ns_);
            eng_.after(static_cast<ns_t>(std::max(0.0, rtt)), k_rr_response);
        }
        if (!t.waiting.empty()) start_tx(q);
        // Interrupt coalescing: fire tx-usecs after the first unreported frame, or at once
        // when tx-frames have piled up.
        if (t.used.size() >= irq_frames_) {
            ++t.irq_gen;
            t.irq_armed = true;
            eng_.after(0, k_irq + q, t.irq_gen);
        } else if (!t.irq_armed) {
            t.irq_armed = true;
            eng_.after(jittered(rng_, static_cast<double>(irq_delay_ns_), jitter_), k_irq + q,
                       t.irq_gen);
        }
    }

    /// The TX completion (NAPI) run: reclaim every sent buffer, report them to the policy in
    /// one call, restart the queue, and give TSQ credit back to the flows.
    void irq(std::uint32_t q, std::uint32_t gen) {
        txq& t = *queues_[q];
        if (gen != t.irq_gen || !t.irq_armed) return;
        t.irq_armed = false;
        ++t.irq_gen;
        if (w_.contains(now())) ++wakeups_;
        std::uint64_t bytes = 0;
        std::vector<std::uint32_t> freed;
        while (!t.used.empty()) {
            const packet pkt = t.used.front();
            t.used.pop_front();
            bytes += pkt.bytes;
            ++reclaimed_;
            --below_[pkt.flow];
            if (w_.contains(now())) {
                ++departures_;
                departed_bytes_ += pkt.bytes;
                sojourn_.add(now() - pkt.posted);
            }
            inside_ns_ += w_.overlap(pkt.posted, now());
            if (pkt.flow != rr_flow()) freed.push_back(pkt.flow);
        }
        if (bytes == 0) return;
        t.pol->completed(static_cast<std::uint32_t>(bytes), now());
        t.held_bytes -= bytes;
        completed_bytes_ += bytes;
        t.occupancy.set(now(), t.slots());
        if (auto l = t.pol->limit()) t.limit.set(now(), *l);
        if (t.stopped != stop_reason::none && !t.pol->over_limit() && t.slots() < ring_cap_)
            t.stopped = stop_reason::none;
        for (std::uint32_t f : freed) send(f);
        run_queue(q);
        // Freed credit may belong to flows of other queues.
        for (std::uint32_t f : freed)
            if (flow_queue_[f] != q) run_queue(flow_queue_[f]);
    }

    void rr_response() {
        if (w_.contains(now())) ++transactions_;
        send(rr_flow());
        run_queue(flow_queue_[rr_flow()]);
    }

    void take_sample() {
        sample s;
        s.t_ms = static_cast<double>(now()) / static_cast<double>(ns_per_ms);
        double lim = 0, infl = 0, pinfl = 0;
        bool has_limit = false;
        for (const auto& t : queues_) {
            if (auto l = t->pol->limit()) {
                lim += *l;
                has_limit = true;
            }
            infl += static_cast<double>(t->slots());
            pinfl += static_cast<double>(t->pol->inflight());
        }
        if (has_limit) s.limit = lim / static_cast<double>(queues_.size());
        s.inflight = infl;
        s.policy_inflight = pinfl;
        series_.push_back(s);
        eng_.after(sample_ns_, k_sample);
    }

    run_result finish() {
        run_result r = blank_result();
        r.policy = policy_name_;
        r.series = std::move(series_);
        r.events = eng_.processed();
        const double secs = w_.seconds();
        const double nq = static_cast<double>(queues_.size());
        double occ = 0, occ_p99 = 0, lim_mean = 0, lim_final = 0;
        bool has_limit = false;
        std::uint64_t inside = 0;
        area_t occ_area = 0; // all rings' (Little's law)
        for (auto& t : queues_) {
            t->occupancy.finish(end_);
            t->limit.finish(end_);
            occ += t->occupancy.mean();
            occ_area += t->occupancy.area();
            occ_p99 = std::max(occ_p99, t->occupancy.quantile(0.99));
            if (auto l = t->pol->limit()) {
                has_limit = true;
                lim_mean += t->limit.mean() / nq;
                lim_final += *l / nq;
            }
            inside += t->qd.size() + t->slots();
            if (t->pol->inflight() != static_cast<std::uint32_t>(t->held_bytes))
                r.failures.emplace_back("policy inflight disagrees with the bytes in the ring");
        }
        const double pps = static_cast<double>(departures_) / secs;
        r.set("throughput_pps", pps);
        r.set("throughput_bps", static_cast<double>(departed_bytes_) * 8.0 / secs);
        r.set("inflight_mean", occ);
        r.set("inflight_p99", occ_p99); // the busiest queue's p99 (slots)
        if (has_limit) {
            r.set("limit_mean", lim_mean);
            r.set("limit_final", lim_final);
        }
        r.set("sojourn_mean_us", mean_us(sojourn_));
        r.set("sojourn_p50_us", quantile_us(sojourn_, 0.5));
        r.set("sojourn_p99_us", quantile_us(sojourn_, 0.99));
        if (rr_delay_.count() > 0) r.set("probe_p99_us", rr_delay_.quantile(0.99) / 1000.0);
        r.set("rr_tps", static_cast<double>(transactions_) / secs);
        r.set("producer_stops_per_s", static_cast<double>(stops_) / secs);
        r.set("consumer_wakeups_per_s", static_cast<double>(wakeups_) / secs);
        r.set("cpu_util", static_cast<double>(link_busy_ns_) /
                              (static_cast<double>(w_.end - w_.begin) * nq));
        r.set("rr_delay_mean_us", mean_us(rr_delay_));

        check_conservation(r, "buffers", generated_, reclaimed_, inside);
        std::uint64_t held = 0;
        for (const auto& t : queues_) held += t->held_bytes;
        check_conservation(r, "policy bytes", posted_bytes_, completed_bytes_, held);
        for (const auto& t : queues_)
            check_conservation(r, "qdisc", t->qd.enqueued(), t->qd.dequeued(), t->qd.size());
        // Little's law on the rings with every stay clipped to the window, those still inside at
        // its end included (check_little_clipped): exact for any window.
        for (const auto& t : queues_) {
            for (const packet& p : t->waiting) inside_ns_ += w_.overlap(p.posted, end_);
            for (const packet& p : t->used) inside_ns_ += w_.overlap(p.posted, end_);
            if (t->tx_busy) inside_ns_ += w_.overlap(t->on_wire.posted, end_);
        }
        check_little_clipped(r, occ_area, inside_ns_, w_, "tx rings");
        return r;
    }

    param_values p_;
    std::string policy_name_;
    engine eng_;
    rng rng_{static_cast<std::uint64_t>(p_.at("seed"))};
    std::vector<std::unique_ptr<txq>> queues_;
    std::vector<std::uint32_t> flow_queue_, below_;
    qdisc_kind kind_ = qdisc_kind::fq;
    std::uint32_t bulk_ = 0, gso_ = 0, tsq_ = 0, rr_bytes_ = 0;
    double ns_per_byte_ = 0;
    std::size_t ring_cap_ = 256, irq_frames_ = 128;
    ns_t rtt_ns_ = 0, irq_delay_ns_ = 0, end_ = 0, sample_ns_ = 0;
    double rtt_half_width_ns_ = 0, jitter_ = 0;
    window w_;

    std::uint64_t generated_ = 0, reclaimed_ = 0, posted_bytes_ = 0, completed_bytes_ = 0;
    std::uint64_t departures_ = 0, departed_bytes_ = 0, transactions_ = 0, stops_ = 0;
    area_t inside_ns_ = 0; // ring stays inside the window, all queues (Little's law)
    std::uint64_t wakeups_ = 0;
    ns_t link_busy_ns_ = 0;
    histogram sojourn_, rr_delay_;
    std::vector<sample> series_;
};

inline std::string case_label(const param_values& p) {
    return std::string{p.at("qdisc") == 0 ? "fq" : "fifo"} + " " +
           std::to_string(static_cast<int>(p.at("queues"))) + "q";
}

} // namespace lab::sim::virtio
