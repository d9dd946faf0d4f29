// qlimits-lab pipeline: not a model. Two real threads move items through qlimits::channel over a
// real SPSC ring, with real wake-ups (futex through std::atomic wait/notify) and a real per-item
// cost (a calibrated busy loop). Every invocation runs the chosen policies one after the other
// with the same settings and prints each against no limit, because absolute numbers depend on
// the machine and on whatever else it is running.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "pipe/busy_work.hpp"
#include "pipe/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "pipe/erased_policy.hpp"
#include "sim/params.hpp"
#include "sim/registry.hpp"
#include "sim/report.hpp"
#include "sim/result.hpp"
#include "sim/stats.hpp"

namespace lab {
namespace {

using steady = std::chrono::steady_clock;

std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now().time_since_epoch())
            .count());
}

std::vector<sim::param_spec> pipeline_params() {
    return {
        {"ring", "256", 2, 1048576, true, false, {}, "entries", "veth ptr_ring size, 256 (dql.md 11)"},
        {"item-bytes", "64", 8, 65536, true, false, {}, "bytes",
         "modelling choice: one cache line of payload written by the producer, read by the consumer"},
        {"work-ns", "500", 0, 1e7, false, false, {}, "ns",
         "seed 001: ~442 ns per packet at nrules 0, rounded"},
        {"batch", "64", 1, 4096, true, false, {}, "items", "NAPI budget 64 (dql.md 11)"},
        {"pattern", "flood", 0, 2, true, false, {"flood", "bursts", "paced"}, "",
         "modelling choice: flood like pktgen (seed 001)"},
        {"burst", "64", 1, 1e6, true, false, {}, "items", "modelling choice (bursts): one poll's worth"},
        {"burst-gap-us", "100", 0, 1e7, false, false, {}, "us",
         "modelling choice (bursts): veth tx-usecs 100 us (landscape.md [VE8])"},
        {"rate", "1000000", 1, 1e9, false, false, {}, "items/s",
         "modelling choice (paced): 1 M items/s, below the default consumer's ~2 M/s"},
        {"duration-ms", "1000", 10, 600000, true, false, {}, "ms",
         "modelling choice: 1 s per policy"},
        {"fixed-limit", "8", 0, 1e6, true, true, {}, "items",
         "veth limit_min=8 proposal (landscape.md [VE5][VE9]); a list gives one row per limit"},
        {"hold-ms", "1000", 0, 65535, true, false, {}, "ms",
         "Linux default: dql_init(HZ), 1 s (dql.md 5)"},
        {"limit-min", "0", 0, 1879048192, true, false, {}, "items",
         "Linux default: dql_init sets limit_min 0 (dql.md section 5)"},
    };
}

/// The pipeline's completion modes: the channel reports per item or once per receive_batch.
std::vector<sim::completion_choice> pipeline_completions() {
    return {{"item", sim::completion_mode::per_item, "completion per item (veth BQL v5)"},
            {"batch", sim::completion_mode::per_poll,
             "completion once per consumer batch (dql.md 11)"}};
}

struct item {
    std::uint64_t stamp_ns = 0;
    std::uint64_t seq = 0;
};

struct settings {
    std::size_t ring = 256, item_bytes = 64, batch = 64, burst = 64;
    double work_ns = 500, burst_gap_us = 100, rate = 1e6;
    int pattern = 0;
    std::uint64_t duration_ms = 1000;
};

struct thread_usage {
    long voluntary = 0, involuntary = 0;
    static thread_usage now() {
        rusage ru{};
        getrusage(RUSAGE_THREAD, &ru);
        return {ru.ru_nvcsw, ru.ru_nivcsw};
    }
    thread_usage operator-(const thread_usage& o) const {
        return {voluntary - o.voluntary, involuntary - o.involuntary};
    }
};

struct outcome {
    std::string policy;
    std::uint64_t items = 0;
    double seconds = 0;
    sim::histogram sojourn, inflight;
    std::uint64_t stops = 0, producer_wakeups = 0, consumer_wakeups = 0, consumer_sleeps = 0;
    std::uint32_t limit_final = 0;
    bool has_limit = true;
    thread_usage prod, cons;
    std::uint64_t checksum = 0;
};

outcome run_one(const settings& s, const sim::policy_row& row, const sim::param_values& values,
                const pipe::busy_work& work) {
    pipe::spsc_ring<item> ring{s.ring};
    const pipe::erased_policy::config_type cfg{sim::make_policy(row, values)};
    const bool has_limit = cfg.impl->limit().has_value();
    const std::string& name = row.name;
    const qlimits::completion mode = row.completion == sim::completion_mode::per_item
                                         ? qlimits::completion::per_item
                                         : qlimits::completion::per_batch;
    qlimits::channel<pipe::spsc_ring<item>, pipe::erased_policy> ch{ring, cfg};
    // Payload lives beside the ring: slot seq % (ring + 2) cannot be rewritten while the
    // consumer may still read it (at most ring items queued plus one being processed).
    const std::size_t pool_slots = s.ring + 2;
    std::vector<unsigned char> pool(pool_slots * s.item_bytes);
    outcome out;
    out.policy = name;
    out.has_limit = has_limit;

    std::atomic<bool> go{false};
    std::thread producer([&] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        const thread_usage u0 = thread_usage::now();
        const std::uint64_t start = now_ns();
        const std::uint64_t end = start + s.duration_ms * 1'000'000;
        const double gap_ns = 1e9 / s.rate;
        double due = static_cast<double>(start);
        for (std::uint64_t seq = 0;; ++seq) {
            std::uint64_t t = now_ns();
            if (t >= end) break;
            if (s.pattern == 1 && seq > 0 && seq % s.burst == 0)
                std::this_thread::sleep_for(std::chrono::nanoseconds{
                    static_cast<std::int64_t>(s.burst_gap_us * 1000)});
            if (s.pattern == 2) {
                due += gap_ns;
                while (static_cast<double>(t = now_ns()) < due) {
                    if (due - static_cast<double>(t) > 200'000)
                        std::this_thread::sleep_for(std::chrono::microseconds{100});
                }
            }
            unsigned char* p = &pool[(seq % pool_slots) * s.item_bytes];
            std::fill(p, p + s.item_bytes, static_cast<unsigned char>(seq));
            if (ch.send(item{now_ns(), seq}) != qlimits::send_status::ok) break;
        }
        ch.close();
        out.prod = thread_usage::now() - u0;
    });
    std::thread consumer([&] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        const thread_usage u0 = thread_usage::now();
        std::vector<item> buf(s.batch);
        for (;;) {
            const std::size_t n = ch.receive_batch(std::span<item>{buf}, mode);
            if (n == 0) break;
            out.inflight.add(ch.inflight());
            for (std::size_t i = 0; i < n; ++i) {
                out.sojourn.add(now_ns() - buf[i].stamp_ns);
                const unsigned char* p = &pool[(buf[i].seq % pool_slots) * s.item_bytes];
                for (std::size_t b = 0; b < s.item_bytes; b += 8) out.checksum += p[b];
                work.run(s.work_ns);
            }
            out.items += n;
        }
        out.cons = thread_usage::now() - u0;
    });
    const std::uint64_t t0 = now_ns();
    go.store(true, std::memory_order_release);
    producer.join();
    consumer.join();
    out.seconds = static_cast<double>(now_ns() - t0) / 1e9;
    const auto st = ch.stats();
    out.stops = st.stops;
    out.producer_wakeups = st.producer_wakeups;
    out.consumer_wakeups = st.consumer_wakeups;
    out.consumer_sleeps = st.consumer_sleeps;
    out.limit_final = st.limit;
    return out;
}

sim::run_result to_result(const outcome& o, const std::vector<std::pair<std::string, std::string>>& params) {
    sim::run_result r = sim::blank_result();
    r.scenario = "pipeline";
    r.case_label = "real threads";
    r.policy = o.policy;
    r.params = params;
    const double s = o.seconds > 0 ? o.seconds : 1;
    r.set("throughput_pps", static_cast<double>(o.items) / s);
    r.set("inflight_mean", o.inflight.mean());
    r.set("inflight_p99", o.inflight.quantile(0.99));
    if (o.has_limit) r.set("limit_final", o.limit_final);
    r.set("sojourn_mean_us", o.sojourn.mean() / 1000);
    r.set("sojourn_p50_us", o.sojourn.quantile(0.5) / 1000);
    r.set("sojourn_p99_us", o.sojourn.quantile(0.99) / 1000);
    r.set("sojourn_max_us", static_cast<double>(o.sojourn.max()) / 1000);
    r.set("producer_stops_per_s", static_cast<double>(o.stops) / s);
    r.set("consumer_wakeups_per_s", static_cast<double>(o.consumer_wakeups) / s);
    r.set("producer_wakeups_per_s", static_cast<double>(o.producer_wakeups) / s);
    r.set("producer_voluntary_csw", static_cast<double>(o.prod.voluntary));
    r.set("producer_involuntary_csw", static_cast<double>(o.prod.involuntary));
    r.set("consumer_voluntary_csw", static_cast<double>(o.cons.voluntary));
    r.set("consumer_involuntary_csw", static_cast<double>(o.cons.involuntary));
    return r;
}

} // namespace

int pipeline_main(int argc, char** argv) {
    const auto specs = sim::with_policy_params(pipeline_params());
    sim::param_lists user;
    std::vector<std::string> policy_filter;
    std::string json_file;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--policy=", 0) == 0) {
            std::string v = arg.substr(9);
            policy_filter.clear();
            for (std::size_t start = 0;;) {
                const std::size_t c = v.find(',', start);
                policy_filter.push_back(v.substr(start, c == std::string::npos ? c : c - start));
                if (c == std::string::npos) break;
                start = c + 1;
            }
            continue;
        }
        if (arg == "--json" || arg.rfind("--json=", 0) == 0) {
            json_file = arg.size() > 7 ? arg.substr(7) : (i + 1 < argc ? argv[++i] : "");
            if (json_file.empty()) {
                std::fprintf(stderr, "qlimits-lab pipeline: --json needs a file name\n");
                return exit_usage;
            }
            continue;
        }
        if (arg == "--list") {
            for (const auto& p : specs)
                std::printf("  --%s=%s  %s\n      source: %s\n", p.name.c_str(), p.def.c_str(),
                            p.unit.c_str(), p.source.c_str());
            return exit_ok;
        }
        const std::size_t eq = arg.find('=');
        const std::string name = arg.rfind("--", 0) == 0 ? arg.substr(2, eq == std::string::npos ? eq : eq - 2) : "";
        const sim::param_spec* spec = nullptr;
        for (const auto& p : specs)
            if (p.name == name) spec = &p;
        if (spec == nullptr) {
            std::fprintf(stderr, "qlimits-lab pipeline: unknown argument '%s' (see --list)\n", arg.c_str());
            return exit_usage;
        }
        if (eq == std::string::npos) {
            std::fprintf(stderr, "qlimits-lab pipeline: --%s: expected --%s=VALUE\n", name.c_str(), name.c_str());
            return exit_usage;
        }
        std::vector<double> vals;
        if (auto err = sim::parse_list(*spec, std::string_view{arg}.substr(eq + 1), vals)) {
            std::fprintf(stderr, "qlimits-lab pipeline: --%s: %s\n", name.c_str(), err->c_str());
            return exit_usage;
        }
        user[name] = vals;
    }
    const sim::param_lists v = sim::resolve(specs, user);
    settings s;
    s.ring = static_cast<std::size_t>(v.at("ring")[0]);
    s.item_bytes = static_cast<std::size_t>(v.at("item-bytes")[0]);
    s.work_ns = v.at("work-ns")[0];
    s.batch = static_cast<std::size_t>(v.at("batch")[0]);
    s.pattern = static_cast<int>(v.at("pattern")[0]);
    s.burst = static_cast<std::size_t>(v.at("burst")[0]);
    s.burst_gap_us = v.at("burst-gap-us")[0];
    s.rate = v.at("rate")[0];
    s.duration_ms = static_cast<std::uint64_t>(v.at("duration-ms")[0]);
    std::vector<std::pair<std::string, std::string>> params;
    for (const auto& p : specs) {
        std::string text;
        for (double x : v.at(p.name)) {
            if (!text.empty()) text += ',';
            text += sim::format_value(p, x);
        }
        params.emplace_back(p.name, text);
    }
    // The rows come from the registry; an unknown name is refused before anything runs.
    const std::vector<sim::policy_row> rows =
        sim::registry_rows(pipeline_completions(), sim::completion_mode::per_poll, v);
    for (const auto& f : policy_filter) {
        bool found = false;
        for (const auto& r : rows) found = found || sim::row_selected({f}, r.name);
        if (!found) {
            std::string known;
            for (const auto& r : rows) known += (known.empty() ? "" : ", ") + r.name;
            std::fprintf(stderr, "qlimits-lab pipeline: unknown policy '%s' (%s)\n", f.c_str(),
                         known.c_str());
            return exit_usage;
        }
    }
    sim::param_values values;
    for (const auto& [name, list] : v) values[name] = list.front();

    if (isatty(STDERR_FILENO) == 1) std::fprintf(stderr, "calibrating the busy loop...\n");
    const pipe::busy_work work;
    std::vector<outcome> outs;
    // "none" always runs first: every other policy is reported against it.
    for (const auto& r : rows)
        if (r.name == "none") outs.push_back(run_one(s, r, values, work));
    for (const auto& r : rows) {
        if (r.name == "none" || !sim::row_selected(policy_filter, r.name)) continue;
        sim::param_values rv = values;
        if (r.row_value) rv[r.entry->row_param] = *r.row_value;
        outs.push_back(run_one(s, r, rv, work));
    }

    std::vector<sim::run_result> results;
    for (const auto& o : outs) results.push_back(to_result(o, params));
    std::printf("pipeline: %s, ring %zu, batch %zu, %zu-byte items, %.0f ns work per item, "
                "%llu ms per policy (machine-dependent: compare the ratios)\n\n",
                specs[4].choices[static_cast<std::size_t>(s.pattern)].c_str(), s.ring, s.batch,
                s.item_bytes, s.work_ns, static_cast<unsigned long long>(s.duration_ms));
    std::printf("%-10s %11s %7s %9s %9s %9s %8s %8s %10s %10s %10s %12s %12s\n", "policy",
                "items/s", "x none", "soj.p50us", "soj.p99us", "soj.max", "inflight", "limit",
                "stops/s", "c.wake/s", "p.wake/s", "csw vol p/c", "csw inv p/c");
    const double base = results.front().get("throughput_pps").value_or(0);
    const double base_p99 = results.front().get("sojourn_p99_us").value_or(0);
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        const auto& o = outs[i];
        const double pps = r.get("throughput_pps").value_or(0);
        char csw_v[32], csw_i[32];
        std::snprintf(csw_v, sizeof csw_v, "%ld/%ld", o.prod.voluntary, o.cons.voluntary);
        std::snprintf(csw_i, sizeof csw_i, "%ld/%ld", o.prod.involuntary, o.cons.involuntary);
        std::printf("%-10s %11.4g %7.3f %9.4g %9.4g %9.4g %8.3g %8s %10.3g %10.3g %10.3g %12s %12s\n",
                    r.policy.c_str(), pps, base > 0 ? pps / base : 0,
                    r.get("sojourn_p50_us").value_or(0), r.get("sojourn_p99_us").value_or(0),
                    r.get("sojourn_max_us").value_or(0), r.get("inflight_mean").value_or(0),
                    sim::fmt_num(r.get("limit_final")).c_str(),
                    r.get("producer_stops_per_s").value_or(0),
                    r.get("consumer_wakeups_per_s").value_or(0),
                    r.get("producer_wakeups_per_s").value_or(0), csw_v, csw_i);
    }
    std::printf("\nratios against none: ");
    for (std::size_t i = 1; i < results.size(); ++i) {
        const double pps = results[i].get("throughput_pps").value_or(0);
        const double p99 = results[i].get("sojourn_p99_us").value_or(0);
        std::printf("%s throughput x%.3f, sojourn p99 x%.3g%s", results[i].policy.c_str(),
                    base > 0 ? pps / base : 0, base_p99 > 0 ? p99 / base_p99 : 0,
                    i + 1 < results.size() ? "; " : "\n");
    }
    if (results.size() == 1) std::printf("(no other policy selected)\n");
    if (!json_file.empty()) {
        std::ofstream f(json_file);
        f << sim::json(results);
        if (!f) {
            std::fprintf(stderr, "qlimits-lab pipeline: cannot write %s\n", json_file.c_str());
            return exit_failure;
        }
    }
    return exit_ok;
}

} // namespace lab
