// The queueing discipline above the ring: FIFO (pfifo_fast with one band in use) or per-flow
// fair queuing with a new-flow list, as fq_codel schedules (RFC 8290 section 4). CoDel's drop
// law is left out: in these scenarios TCP Small Queues or the ring's back-pressure keep the
// qdisc short, and the seeds report no qdisc drops that matter for the metrics (modelling
// choice, stated in the README).
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <optional>
#include <unordered_map>

#include "packet.hpp"

namespace lab::sim {

enum class qdisc_kind : std::uint8_t { fifo, fq };

class qdisc {
public:
    /// quantum: bytes a flow may send per round (fq_codel default: one MTU-sized frame, 1514).
    explicit qdisc(qdisc_kind kind, std::uint32_t quantum = 1514) : kind_(kind), quantum_(quantum) {}

    [[nodiscard]] qdisc_kind kind() const noexcept { return kind_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

    [[nodiscard]] std::uint64_t enqueued() const noexcept { return enqueued_; }
    [[nodiscard]] std::uint64_t dequeued() const noexcept { return dequeued_; }
    /// Calls `f` on every queued packet (for the honesty checks, not the hot path).
    template <class F>
    void for_each(F f) const {
        for (const auto& p : fifo_) f(p);
        for (const auto& [id, fl] : flows_)
            for (const auto& p : fl.q) f(p);
    }
    /// How many queued packets satisfy `pred`.
    template <class Pred>
    [[nodiscard]] std::size_t count_if(Pred pred) const {
        std::size_t n = 0;
        for_each([&](const packet& p) { n += pred(p) ? 1U : 0U; });
        return n;
    }

    void enqueue(const packet& p) {
        ++enqueued_;
        ++size_;
        if (kind_ == qdisc_kind::fifo) {
            fifo_.push_back(p);
            return;
        }
        flow_state& f = flows_[p.flow];
        f.q.push_back(p);
        if (!f.active) {
            // A flow that had nothing queued is "new": it is served before the old flows, with
            // a full quantum. This is what lets a sparse flow (ping, TCP_RR) bypass bulk ones.
            f.active = true;
            f.deficit = static_cast<std::int64_t>(quantum_);
            new_.push_back(p.flow);
        }
    }

    std::optional<packet> dequeue() {
        if (size_ == 0) return std::nullopt;
        if (kind_ == qdisc_kind::fifo) {
            packet p = fifo_.front();
            fifo_.pop_front();
            --size_;
            ++dequeued_;
            return p;
        }
        for (;;) {
            const bool from_new = !new_.empty();
            std::list<std::uint32_t>& head = from_new ? new_ : old_;
            const std::uint32_t id = head.front();
            flow_state& f = flows_[id];
            if (f.deficit <= 0) {
                // Used up its share this round: refill and go to the back of the old flows.
                f.deficit += static_cast<std::int64_t>(quantum_);
                head.pop_front();
                old_.push_back(id);
                continue;
            }
            if (f.q.empty()) {
                head.pop_front();
                // An emptied new flow waits one round on the old list (so a flow cannot stay
                // "new" forever by sending one packet at a time); an emptied old flow leaves.
                if (from_new && !old_.empty())
                    old_.push_back(id);
                else
                    f.active = false;
                continue;
            }
            packet p = f.q.front();
            f.q.pop_front();
            f.deficit -= static_cast<std::int64_t>(p.bytes);
            --size_;
            ++dequeued_;
            return p;
        }
    }

private:
    struct flow_state {
        std::deque<packet> q;
        std::int64_t deficit = 0;
        bool active = false;
    };
    qdisc_kind kind_;
    std::uint32_t quantum_;
    std::size_t size_ = 0;
    std::uint64_t enqueued_ = 0, dequeued_ = 0;
    std::deque<packet> fifo_;
    std::unordered_map<std::uint32_t, flow_state> flows_;
    std::list<std::uint32_t> new_, old_;
};

} // namespace lab::sim
