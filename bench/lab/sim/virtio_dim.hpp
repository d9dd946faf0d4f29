// Scenario virtio-dim (seed 002): one sockperf-like TCP throughput flow into a virtio-net guest
// whose single CPU runs both the receive path (interrupt, NAPI) and the receiving application,
// as in Heng Qi's test (rxq0 and `sockperf sr` both pinned to CPU 0). The receive queue's
// notifications are coalesced by a moderation (usecs, frames) that is either fixed (one entry of
// the RX EQE table, or virtio-net's default of no coalescing) or chosen by the library's own
// qlimits::net_dim, fed as virtio-net feeds Linux DIM (docs/design.md §5).
//
// Components:
//   sender app (cost per send(), Nagle) -> TCP (receive window, write queue, segments of up to
//   one MSS) -> host path (line rate, one-way delay) -> device backlog -> rx ring (256) ->
//   notification coalescing (EQE: timer from the first packet, or a packet count) -> receiver
//   CPU: interrupt (cost) -> NAPI polls of up to 64 packets (cost per packet) -> socket ->
//   receiving app (cost per recv(), per byte, per message; wake-up cost when it slept).
//   ACKs (at each NAPI poll) and window updates (at each read) reach the sender after the
//   one-way delay.
//
// The receiving CPU is one server with priorities: interrupt and NAPI (softirq) first, then the
// DIM work item (a kworker), then the application. Softirq preempts the application and the
// work item; a NAPI poll is never preempted (the queue's notifications are off while it runs).
//
// Net DIM: the event counter is the number of interrupts (virtio-net's rq->calls); at NAPI
// completion, when the poll received packets, the tuner gets one sample with the cumulative
// interrupt, packet and byte counters; a decision queues the work item, which costs CPU time,
// then applies the new moderation and restarts measuring (on_applied), as virtnet_rx_dim_work.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "engine.hpp"
#include "params.hpp"
#include "qlimits/dim/net_dim.hpp"
#include "qlimits/dim/profiles.hpp"
#include "qlimits/dim/sample.hpp"
#include "result.hpp"
#include "rng.hpp"
#include "scenario.hpp"
#include "stats.hpp"

namespace lab::sim::vdim {

inline std::vector<param_spec> params() {
    std::vector<param_spec> p;
    for (param_spec s : common_params()) {
        if (s.name == "duration-ms") {
            s.def = "1500";
            s.source = "modelling choice: DIM settles within ~0.2 s here; 1 s measured after "
                       "warm-up keeps run all short";
        } else if (s.name == "warmup-ms") {
            s.def = "500";
            s.source = "modelling choice: lets net_dim finish its first search before measuring";
        }
        p.push_back(s);
    }
    const std::vector<param_spec> own{
        {"msg-bytes", "14,100,500,1400,2048,4096", 1, 1048576, true, true, {}, "bytes",
         "seed 002: sockperf tp -m 14/100/500/1400/2048/4096"},
        {"mss", "1448", 64, 65535, true, false, {}, "bytes",
         "MTU 1500 (the BlueField-3 test, docs/design.md §5) minus 52 B of IPv4+TCP with timestamps"},
        {"nagle", "1", 0, 1, true, false, {}, "bool",
         "modelling choice: sockperf's throughput mode leaves Nagle on (its --tcp-avoid-nodelay "
         "help; not in the specs), so small messages share segments"},
        {"window-bytes", "131072", 1448, 1e9, true, false, {}, "bytes",
         "modelling choice: Linux's default tcp_rmem[1] (128 KB) as a fixed receive window, no "
         "autotuning, no congestion window (no loss)"},
        {"write-queue-bytes", "16384", 1, 1e9, true, false, {}, "bytes",
         "modelling choice: Linux's default tcp_wmem[1], counted on not-yet-sent bytes only"},
        {"gbps", "10", 0.001, 1000, false, false, {}, "Gbit/s",
         "modelling choice: host path (vhost and wire) at 10 Gbit/s, as virtio-bql"},
        {"delay-us", "17.8", 0, 1e6, false, false, {}, "us",
         "v3 cover letter: sockperf UDP ping-pong latency 17.77 us (docs/design.md §5), used as the "
         "one-way host path delay of data and of ACKs"},
        {"ring", "256", 1, 65536, true, false, {}, "descriptors",
         "virtio-net default queue size, 256 (docs/design.md §7)"},
        {"budget", "64", 1, 4096, true, false, {}, "packets", "NAPI poll budget 64 (docs/design.md §4)"},
        {"send-ns", "875", 0, 1e9, false, false, {}, "ns",
         "v3 cover letter: the sockperf UDP client sent 1,143,277 16-byte msgs/s (docs/design.md §5): "
         "at most 1/1.143M = 875 ns per send()"},
        {"copy-ns-per-byte", "0.1", 0, 1e6, false, false, {}, "ns/byte",
         "modelling choice: ~10 GB/s copy to or from user memory, on both sides"},
        {"pkt-ns", "442", 0, 1e9, false, false, {}, "ns",
         "seed 001: a software NAPI receive costs 442 ns per packet (veth-bql base-cost-ns)"},
        {"recv-ns", "300", 0, 1e9, false, false, {}, "ns",
         "v3 cover letter: 83.5% CPU at 1,124,161 pps with DIM on = 743 ns per datagram, minus "
         "pkt-ns 442: ~300 ns per recv() call"},
        {"msg-ns", "30", 0, 1e9, false, false, {}, "ns",
         "modelling choice: the receiving app's own work per message (sockperf's header check "
         "and counters)"},
        {"recv-max-bytes", "65536", 1, 1e9, true, false, {}, "bytes",
         "modelling choice: one recv() copies at most 64 KB"},
        {"irq-ns", "2000", 0, 1e9, false, false, {}, "ns",
         "modelling choice: a guest interrupt (injection, handler, NAPI schedule, softirq entry, "
         "re-enabling notifications); see MODEL.md for its check against the v3 numbers"},
        {"poll-ns", "100", 0, 1e9, false, false, {}, "ns",
         "modelling choice: fixed cost of one NAPI poll, as veth-bql"},
        {"wake-ns", "2000", 0, 1e9, false, false, {}, "ns",
         "modelling choice: waking the sleeping app (as veth-bql's consumer-wake-ns)"},
        {"dim-work-us", "10", 0, 1e6, false, false, {}, "us",
         "modelling choice: CPU time of the DIM work item (a control-virtqueue command the guest "
         "waits for)"},
        {"jitter", "0.1", 0, 0.9, false, false, {}, "fraction",
         "modelling choice: +-10% uniform spread of every CPU cost, as veth-bql"},
    };
    p.insert(p.end(), own.begin(), own.end());
    return p;
}

/// Interrupt moderation, not a limit: this scenario's rows are its own, not the registry's.
inline std::vector<policy_row> rows(const param_lists&) {
    std::vector<policy_row> out;
    auto own = [&](const char* name, const char* help) {
        policy_row r;
        r.name = name;
        r.help = help;
        out.push_back(std::move(r));
    };
    own("off", "no coalescing (0 us, 0 frames): virtio-net's default, the seed's 'rx_dim=off'");
    own("static-0", "RX EQE profile 0: 1 us / 256 frames");
    own("static-1", "RX EQE profile 1: 8 us / 256 frames (the DIM default index)");
    own("static-2", "RX EQE profile 2: 64 us / 256 frames");
    own("static-3", "RX EQE profile 3: 128 us / 256 frames");
    own("static-4", "RX EQE profile 4: 256 us / 256 frames");
    own("net-dim", "qlimits::net_dim over the RX EQE table, fed at NAPI completion (virtio-net)");
    return out;
}

/// One run's model state. Not copyable: the engine and the tuner live for the run.
class model {
public:
    model(const param_values& p, const policy_row& row) : p_(p), policy_name_(row.name) {
        const std::string& policy = row.name;
        auto get = [&](const char* n) { return p.at(n); };
        msg_bytes_ = static_cast<std::uint64_t>(get("msg-bytes"));
        mss_ = static_cast<std::uint64_t>(get("mss"));
        nagle_ = get("nagle") != 0;
        window_ = static_cast<std::uint64_t>(get("window-bytes"));
        write_queue_ = static_cast<std::uint64_t>(get("write-queue-bytes"));
        ns_per_byte_wire_ = 8.0 / get("gbps");
        delay_ns_ = static_cast<ns_t>(std::llround(get("delay-us") * 1000.0));
        ring_cap_ = static_cast<std::size_t>(get("ring"));
        budget_ = static_cast<std::size_t>(get("budget"));
        send_ns_ = get("send-ns");
        copy_ = get("copy-ns-per-byte");
        pkt_ns_ = get("pkt-ns");
        recv_ns_ = get("recv-ns");
        msg_ns_ = get("msg-ns");
        recv_max_ = static_cast<std::uint64_t>(get("recv-max-bytes"));
        irq_ns_ = get("irq-ns");
        poll_ns_ = get("poll-ns");
        wake_ns_ = get("wake-ns");
        work_ns_ = get("dim-work-us") * 1000.0;
        jitter_ = get("jitter");
        end_ = static_cast<ns_t>(get("duration-ms")) * ns_per_ms;
        w_ = window{std::min<ns_t>(static_cast<ns_t>(get("warmup-ms")) * ns_per_ms, end_), end_};
        sample_ns_ = static_cast<ns_t>(get("sample-us")) * ns_per_us;

        if (policy == "net-dim") {
            dim_ = true; // a zeroed tuner (index 0, parked on top); the device runs virtio's 0/0
        } else if (policy.rfind("static-", 0) == 0) {
            const auto ix = static_cast<std::size_t>(policy.back() - '0');
            moder_ = qlimits::net_dim_rx_eqe_profile[ix];
        } // "off": 0 us, 0 frames
        outstanding_ = level{w_};
        usecs_ = level{w_};
        ix_ = level{w_};
        usecs_.set(0, moder_.usec);
        ix_.set(0, tuner_.profile_ix());
    }

    run_result run() {
        eng_.at(0, k_sample);
        start_send();
        event e;
        while (eng_.next(e, end_)) dispatch(e);
        return finish();
    }

private:
    enum kind : std::uint32_t { k_send_done, k_arrive, k_timer, k_cpu_done, k_feedback, k_sample };
    enum class task : std::uint8_t { idle, irq, napi, work, app };
    enum class app_state : std::uint8_t { sleeping, runnable, reading };
    struct segment {
        std::uint64_t bytes;
    };
    struct feedback {
        std::uint64_t acked, read;
    };

    void dispatch(const event& e) {
        switch (e.kind) {
        case k_send_done: send_done(); break;
        case k_arrive: arrive(); break;
        case k_timer:
            if (e.arg == timer_gen_ && timer_armed_) fire_interrupt();
            break;
        case k_cpu_done:
            if (e.arg == cpu_gen_) cpu_done();
            break;
        case k_feedback: feedback_arrives(); break;
        case k_sample: take_sample(); break;
        default: break;
        }
    }

    [[nodiscard]] ns_t now() const noexcept { return eng_.now(); }
    ns_t cost(double base) { return jittered(rng_, base, jitter_); }

    // ---- sender: app, TCP, host path --------------------------------------------------------

    void start_send() {
        sender_busy_ = true;
        // At least 1 ns, as the event estimate assumes (scenarios.hpp): at --send-ns=0 and a
        // copy cost under half a ns, a send of 0 ns made the whole write queue (10^9 one-byte
        // messages) at t = 0, without bound by --duration-ms (a lab fuzz, 2026-12-06).
        const ns_t d = std::max<ns_t>(1, cost(send_ns_ + copy_ * static_cast<double>(msg_bytes_)));
        sender_busy_ns_ += w_.overlap(now(), now() + d);
        eng_.after(d, k_send_done);
    }

    void send_done() {
        unsent_ += msg_bytes_;
        app_sent_bytes_ += msg_bytes_;
        msgs_.push_back(now());
        ++msgs_sent_;
        outstanding_.set(now(), msgs_.size());
        try_transmit();
        if (unsent_ < write_queue_) {
            start_send();
        } else {
            sender_busy_ = false; // blocked until segments leave
        }
    }

    /// TCP output: segments of up to one MSS while the receive window has room; with Nagle a
    /// segment shorter than an MSS waits while earlier data is unacknowledged.
    void try_transmit() {
        while (unsent_ > 0) {
            const std::uint64_t seg = std::min(unsent_, mss_);
            if (tx_bytes_ - known_read_ + seg > window_) break;
            if (nagle_ && seg < mss_ && tx_bytes_ > known_acked_) break;
            const ns_t ser = static_cast<ns_t>(
                std::llround(ns_per_byte_wire_ * static_cast<double>(seg)));
            link_free_ = std::max(link_free_, now()) + ser;
            link_.push_back(segment{seg});
            link_bytes_ += seg;
            eng_.at(link_free_ + delay_ns_, k_arrive);
            tx_bytes_ += seg;
            unsent_ -= seg;
            ++tx_pkts_;
        }
        if (!sender_busy_ && unsent_ < write_queue_) start_send();
    }

    void feedback_arrives() {
        const feedback f = fb_.front();
        fb_.pop_front();
        known_acked_ = std::max(known_acked_, f.acked);
        known_read_ = std::max(known_read_, f.read);
        try_transmit();
    }

    void send_feedback() {
        fb_.push_back(feedback{rx_bytes_, read_ptr_});
        eng_.after(delay_ns_, k_feedback);
    }

    // ---- device: ring and notification coalescing ------------------------------------------

    void arrive() {
        const segment s = link_.front();
        link_.pop_front();
        link_bytes_ -= s.bytes;
        if (ring_.size() >= ring_cap_) {
            backlog_.push_back(s);
            backlog_bytes_ += s.bytes;
            return;
        }
        ring_.push_back(s);
        ring_bytes_ += s.bytes;
        device_event();
    }

    /// A packet was placed in the ring. With notifications enabled, the moderation decides
    /// when the interrupt fires: at once (0 us, 0 frames), when `pkts` packets have arrived, or
    /// `usec` after the first one (EQE: the timer starts at the event and does not restart).
    void device_event() {
        if (!notify_enabled_) return;
        ++coalesced_;
        const bool use_pkts = moder_.pkts > 0, use_usec = moder_.usec > 0;
        if ((!use_pkts && !use_usec) || (use_pkts && coalesced_ >= moder_.pkts)) {
            fire_interrupt();
            return;
        }
        if (use_usec && !timer_armed_) {
            timer_armed_ = true;
            eng_.after(static_cast<ns_t>(moder_.usec) * ns_per_us, k_timer, ++timer_gen_);
        }
    }

    void fire_interrupt() {
        notify_enabled_ = false;
        timer_armed_ = false;
        ++timer_gen_;
        coalesced_ = 0;
        ++calls_;
        if (w_.contains(now())) ++irqs_;
        softirq_pending_ = true;
        if (cpu_ == task::app || cpu_ == task::work) preempt();
        if (cpu_ == task::idle) schedule_cpu();
    }

    // ---- receiver CPU --------------------------------------------------------------------

    void run_task(task t, ns_t d) {
        cpu_ = t;
        task_start_ = now();
        task_end_ = now() + d;
        eng_.after(d, k_cpu_done, ++cpu_gen_);
    }

    void account(ns_t from, ns_t to) {
        const ns_t d = w_.overlap(from, to);
        busy_ns_ += d;
        if (cpu_ == task::irq) irq_ns_total_ += d;
        if (cpu_ == task::napi) napi_ns_total_ += d;
    }

    /// Softirq takes the CPU from the app or the work item, which resume where they stopped.
    void preempt() {
        account(task_start_, now());
        const ns_t left = task_end_ - now();
        if (cpu_ == task::app) app_left_ = left;
        else work_left_ = left;
        cpu_ = task::idle;
        ++cpu_gen_; // the preempted task's end event is void
    }

    void schedule_cpu() {
        if (softirq_pending_) {
            softirq_pending_ = false;
            run_task(task::irq, cost(irq_ns_));
            return;
        }
        if (work_queued_) {
            run_task(task::work, work_left_);
            return;
        }
        if (app_ == app_state::reading) { // resume a preempted read
            run_task(task::app, app_left_);
            return;
        }
        if (app_ == app_state::runnable) start_read();
    }

    void cpu_done() {
        account(task_start_, now());
        const task t = cpu_;
        cpu_ = task::idle;
        switch (t) {
        case task::irq: start_poll(); break;
        case task::napi: end_poll(); break;
        case task::work: end_work(); break;
        case task::app: end_read(); break;
        case task::idle: break;
        }
        if (cpu_ == task::idle) schedule_cpu();
    }

    void start_poll() {
        const std::size_t k = std::min(budget_, ring_.size());
        double d = static_cast<double>(cost(poll_ns_));
        for (std::size_t i = 0; i < k; ++i) {
            poll_bytes_ += ring_.front().bytes;
            ring_bytes_ -= ring_.front().bytes;
            ring_.pop_front();
            d += static_cast<double>(cost(pkt_ns_));
        }
        poll_pkts_ = k;
        run_task(task::napi, static_cast<ns_t>(d));
    }

    void end_poll() {
        const std::size_t k = poll_pkts_;
        rx_pkts_ += k;
        rx_bytes_ += poll_bytes_;
        sock_bytes_ += poll_bytes_;
        if (w_.contains(now())) rx_pkts_window_ += k;
        poll_bytes_ = 0;
        poll_pkts_ = 0;
        // The guest refilled the descriptors; the device moves waiting packets in (no
        // notification: it is off while NAPI runs).
        while (!backlog_.empty() && ring_.size() < ring_cap_) {
            ring_.push_back(backlog_.front());
            ring_bytes_ += backlog_.front().bytes;
            backlog_bytes_ -= backlog_.front().bytes;
            backlog_.pop_front();
        }
        if (k > 0) send_feedback(); // the TCP ACK for what this poll received
        if (sock_bytes_ > 0 && app_ == app_state::sleeping) {
            app_ = app_state::runnable;
            app_needs_wake_ = true;
        }
        if (k == budget_) { // budget used up: NAPI polls again
            start_poll();
            return;
        }
        // napi_complete_done, then the DIM sample (virtnet_poll), then notifications back on;
        // if packets came meanwhile, virtqueue_napi_complete reschedules the poll.
        if (dim_ && k > 0) dim_sample();
        if (!ring_.empty()) {
            start_poll();
            return;
        }
        notify_enabled_ = true;
    }

    void dim_sample() {
        const auto s = qlimits::make_dim_sample(std::chrono::nanoseconds{static_cast<std::int64_t>(now())},
                                                calls_, rx_pkts_, rx_bytes_);
        if (tuner_.on_sample(s)) {
            work_queued_ = true;
            work_left_ = cost(work_ns_);
        }
    }

    void end_work() {
        work_queued_ = false;
        work_left_ = 0;
        moder_ = tuner_.current_moderation();
        tuner_.on_applied();
        if (w_.contains(now())) ++dim_changes_;
        usecs_.set(now(), moder_.usec);
        ix_.set(now(), tuner_.profile_ix());
    }

    void start_read() {
        reading_bytes_ = std::min(sock_bytes_, recv_max_);
        sock_bytes_ -= reading_bytes_;
        const std::uint64_t done = (read_ptr_ + reading_bytes_) / msg_bytes_ - read_ptr_ / msg_bytes_;
        double d = recv_ns_ + copy_ * static_cast<double>(reading_bytes_) +
                   msg_ns_ * static_cast<double>(done);
        if (app_needs_wake_) {
            d += wake_ns_;
            app_needs_wake_ = false;
            if (w_.contains(now())) ++app_wakeups_;
        }
        app_ = app_state::reading;
        run_task(task::app, cost(d));
    }

    void end_read() {
        read_ptr_ += reading_bytes_;
        reading_bytes_ = 0;
        while (!msgs_.empty() && (msgs_read_ + 1) * msg_bytes_ <= read_ptr_) {
            if (w_.contains(now())) {
                ++departures_;
                sojourn_.add(now() - msgs_.front());
            }
            inside_ns_ += w_.overlap(msgs_.front(), now());
            msgs_.pop_front();
            ++msgs_read_;
        }
        outstanding_.set(now(), msgs_.size());
        send_feedback(); // the window update
        app_ = sock_bytes_ > 0 ? app_state::runnable : app_state::sleeping;
    }

    // ---- sampling and results -------------------------------------------------------------

    void take_sample() {
        sample s;
        s.t_ms = static_cast<double>(now()) / static_cast<double>(ns_per_ms);
        s.limit = moder_.usec; // the "limit" series of this scenario is rx-usecs in force
        s.inflight = static_cast<double>(msgs_.size());
        s.policy_inflight = static_cast<double>(ring_.size());
        series_.push_back(s);
        eng_.after(sample_ns_, k_sample);
    }

    run_result finish() {
        // The task running at the end is charged up to the window's end, not to the last event
        // (often a time-series sample: --sample-us changed cpu_util, 0.00 for a 1 s recv() at
        // --sample-us=1000000; a lab fuzz, 2026-12-06).
        if (cpu_ != task::idle) account(task_start_, end_);
        outstanding_.finish(end_);
        usecs_.finish(end_);
        ix_.finish(end_);
        run_result r = blank_result();
        r.policy = policy_name_;
        r.series = std::move(series_);
        r.events = eng_.processed();
        const double secs = w_.seconds();
        const double mps = secs > 0 ? static_cast<double>(departures_) / secs : 0;
        const double span = static_cast<double>(w_.end - w_.begin);
        r.set("throughput_pps", mps); // messages read per second
        r.set("throughput_bps", mps * static_cast<double>(msg_bytes_) * 8.0);
        r.set("inflight_mean", outstanding_.mean());
        r.set("inflight_p99", outstanding_.quantile(0.99));
        r.set("sojourn_mean_us", mean_us(sojourn_));
        r.set("sojourn_p50_us", quantile_us(sojourn_, 0.50));
        r.set("sojourn_p99_us", quantile_us(sojourn_, 0.99));
        r.set("consumer_wakeups_per_s", static_cast<double>(irqs_) / secs); // interrupts/s
        r.set("cpu_util", static_cast<double>(busy_ns_) / span);
        r.set("rx_pkts_per_s", static_cast<double>(rx_pkts_window_) / secs);
        r.set("pkts_per_irq", irqs_ > 0 ? static_cast<double>(rx_pkts_window_) / static_cast<double>(irqs_)
                                        : std::optional<double>{});
        r.set("cpu_irq_share", static_cast<double>(irq_ns_total_) / span);
        r.set("cpu_napi_share", static_cast<double>(napi_ns_total_) / span);
        r.set("cpu_ns_per_kb", departures_ > 0 ? static_cast<double>(busy_ns_) /
                                                     (static_cast<double>(departures_) *
                                                      static_cast<double>(msg_bytes_) / 1024.0)
                                               : std::optional<double>{});
        r.set("sender_util", static_cast<double>(sender_busy_ns_) / span);
        r.set("app_wakeups_per_s", static_cast<double>(app_wakeups_) / secs);
        r.set("rx_usecs_mean", usecs_.mean());
        if (dim_) {
            r.set("profile_ix_mean", ix_.mean());
            r.set("profile_ix_final", tuner_.profile_ix());
            r.set("dim_changes", static_cast<double>(dim_changes_));
        }
        // Honesty: every byte the app sent is somewhere; every segment too; Little's law.
        check_conservation(r, "bytes", app_sent_bytes_, read_ptr_,
                           unsent_ + link_bytes_ + backlog_bytes_ + ring_bytes_ + poll_bytes_ +
                               sock_bytes_ + reading_bytes_);
        check_conservation(r, "segments", tx_pkts_, rx_pkts_,
                           link_.size() + backlog_.size() + ring_.size() + poll_pkts_);
        check_conservation(r, "messages", msgs_sent_, msgs_read_, msgs_.size());
        if (tx_bytes_ - known_read_ > window_)
            r.failures.emplace_back("the sender exceeded the receive window");
        if (ring_.size() > ring_cap_) r.failures.emplace_back("the rx ring overflowed");
        // Little's law on messages with every stay clipped to the window, those still unread at
        // its end included (check_little_clipped): exact for any window.
        for (const ns_t sent : msgs_) inside_ns_ += w_.overlap(sent, end_);
        check_little_clipped(r, outstanding_.area(), inside_ns_, w_, "messages outstanding");
        return r;
    }

    param_values p_;
    std::string policy_name_;
    engine eng_;
    rng rng_{static_cast<std::uint64_t>(p_.at("seed"))};
    qlimits::net_dim tuner_{};
    bool dim_ = false;
    qlimits::moderation moder_{}; // what the device runs now; {0, 0}: notify at once

    // parameters
    std::uint64_t msg_bytes_ = 1, mss_ = 1448, window_ = 0, write_queue_ = 0, recv_max_ = 0;
    bool nagle_ = true;
    double ns_per_byte_wire_ = 0, send_ns_ = 0, copy_ = 0, pkt_ns_ = 0, recv_ns_ = 0, msg_ns_ = 0;
    double irq_ns_ = 0, poll_ns_ = 0, wake_ns_ = 0, work_ns_ = 0, jitter_ = 0;
    ns_t delay_ns_ = 0, end_ = 0, sample_ns_ = 0;
    std::size_t ring_cap_ = 256, budget_ = 64;
    window w_;

    // sender and TCP
    bool sender_busy_ = false;
    std::deque<ns_t> msgs_; // send time of each message not yet read
    area_t inside_ns_ = 0;  // messages' time outstanding inside the window (Little's law)
    std::uint64_t msgs_sent_ = 0, msgs_read_ = 0, app_sent_bytes_ = 0, unsent_ = 0;
    std::uint64_t tx_bytes_ = 0, tx_pkts_ = 0, known_acked_ = 0, known_read_ = 0;
    std::deque<feedback> fb_;
    ns_t link_free_ = 0;
    std::deque<segment> link_;
    std::uint64_t link_bytes_ = 0;

    // device
    std::deque<segment> ring_, backlog_;
    std::uint64_t ring_bytes_ = 0, backlog_bytes_ = 0;
    bool notify_enabled_ = true, timer_armed_ = false;
    std::uint32_t timer_gen_ = 0;
    std::uint32_t coalesced_ = 0;
    std::uint64_t calls_ = 0;

    // receiver CPU
    task cpu_ = task::idle;
    std::uint32_t cpu_gen_ = 0;
    ns_t task_start_ = 0, task_end_ = 0, app_left_ = 0, work_left_ = 0;
    bool softirq_pending_ = false, work_queued_ = false, app_needs_wake_ = false;
    app_state app_ = app_state::sleeping;
    std::size_t poll_pkts_ = 0;
    std::uint64_t poll_bytes_ = 0, rx_pkts_ = 0, rx_bytes_ = 0, sock_bytes_ = 0;
    std::uint64_t reading_bytes_ = 0, read_ptr_ = 0;

    // measurements
    std::uint64_t departures_ = 0, irqs_ = 0, rx_pkts_window_ = 0, app_wakeups_ = 0, dim_changes_ = 0;
    ns_t busy_ns_ = 0, irq_ns_total_ = 0, napi_ns_total_ = 0, sender_busy_ns_ = 0;
    level outstanding_{w_}, usecs_{w_}, ix_{w_};
    histogram sojourn_;
    std::vector<sample> series_;
};

inline std::string case_label(const param_values& p) {
    return std::to_string(static_cast<long long>(p.at("msg-bytes"))) + "B";
}

} // namespace lab::sim::vdim
