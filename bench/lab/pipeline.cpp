// qlimits-lab pipeline: not a model. Two real threads move items through qlimits::channel over
// a real SPSC ring, with real wake-ups (the channel's futex calls, qlimits/detail/futex.hpp) and a real
// per-item cost (a calibrated busy loop); pipe/real_run.hpp says what is measured and how it
// is checked. Every policy runs --repeat times, in an order shuffled by --seed each round, each
// against `none` of the same round; the table shows medians and the spread of the ratio.
// --compare-sim measures this machine (calibrate) and runs the thread-ring scenario, the
// pipeline's simulated twin, beside it with the measured parameters.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output.hpp"
#include "qlimits/capture/format.hpp"
#include "pipe/busy_work.hpp"
#include "pipe/calibrate.hpp"
#include "pipe/real_run.hpp"
#include "sim/cli.hpp"
#include "sim/params.hpp"
#include "sim/registry.hpp"
#include "sim/report.hpp"
#include "sim/rng.hpp"
#include "sim/thread_ring.hpp"

namespace lab {
namespace {

std::vector<sim::param_spec> pipeline_params() {
    std::vector<sim::param_spec> p{
        {"seed", "1", 0, 1e18, true, false, {}, "",
         "modelling choice: shuffles the order of the runs in each round"},
        {"duration-ms", "1000", 10, 600000, true, false, {}, "ms",
         "modelling choice: 1 s measured per run"},
        {"warmup-ms", "200", 0, 600000, true, false, {}, "ms",
         "modelling choice: 200 ms discarded first (threads placed, caches and DQL's limit warm)"},
        {"repeat", "3", 1, 1000, true, false, {}, "rounds",
         "modelling choice: 3 rounds, the median and the spread of each figure"},
    };
    for (auto s : sim::tring::workload_params()) {
        if (s.name == "pattern") {
            s.def = "flood";
            s.source = "flood like pktgen (seed 001); a list runs each pattern";
        }
        p.push_back(s);
    }
    return sim::with_policy_params(p);
}

/// The pipeline's completion modes: the channel reports per item or once per receive_batch.
const std::vector<sim::completion_choice>& pipeline_completions() {
    static const std::vector<sim::completion_choice> c = sim::tring::completions();
    return c;
}

// Bounds on what one run may cost beyond its window (checked before anything runs): the
// payload pool, 1 GiB (a quarter of a small machine's memory), and the time the consumer
// needs to work off a full ring after the window, 10 s (ten default windows).
constexpr double pool_bytes_max = 1024.0 * 1024 * 1024;
constexpr double drain_ms_max = 10'000;
// The capture log (--capture) is allocated whole before its run: at most 1 GiB, as the pool.
constexpr double capture_bytes_max = 1024.0 * 1024 * 1024;
/// Entries of each kind a capture log holds for a run of run_ms: room for 3 M items/s (above
/// what this pipeline reaches here: 2.3 M with no work and 8-byte items on one core; a faster
/// machine's excess is counted as dropped by the log and written to the capture).
std::size_t capture_log_entries(double run_ms) {
    return static_cast<std::size_t>(3e6 * run_ms / 1000.0) + 1024;
}
double capture_log_bytes(double run_ms) {
    return static_cast<double>(capture_log_entries(run_ms)) *
           static_cast<double>(sizeof(qlimits::capture_item) + sizeof(qlimits::capture_completion) +
                               sizeof(qlimits::capture_service));
}

const char* const usage_text =
    "usage: qlimits-lab pipeline [--name=value ...] [--policy=a,b] [--json FILE] [--compare-sim]\n"
    "  Two real threads through qlimits::channel, every registry policy (or --policy) against\n"
    "  none, --repeat rounds in an order shuffled by --seed; medians and spreads.\n"
    "  --compare-sim  also measure this machine (as 'qlimits-lab calibrate') and run the\n"
    "                 thread-ring simulation with those parameters beside the real runs\n"
    "  --capture FILE write a capture (qlimits-capture v1) of one more run of\n"
    "                 --capture-policy (default none; one pattern), kept out of the table,\n"
    "                 with this machine's calibrated costs, for 'qlimits-lab whatif'\n"
    "  --list         the parameters, their defaults and sources\n"
    "  Exit: 0 ok, 1 a run's checks failed (row FAILED), 2 bad arguments.\n";

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// All rounds of one (pattern, row): the run_result holds medians, plus the ratio's spread.
struct row_runs {
    sim::policy_row row;
    std::vector<sim::run_result> rounds;
    std::vector<double> ratio; ///< throughput / none's in the same round
};

sim::run_result summarize(const row_runs& rr, const std::string& pattern,
                          const std::vector<std::pair<std::string, std::string>>& params) {
    sim::run_result r = sim::blank_result();
    r.scenario = "pipeline";
    r.case_label = pattern;
    r.policy = rr.row.name;
    r.params = params;
    std::vector<std::string> names;
    for (const auto& x : rr.rounds)
        for (const auto& [n, v] : x.metrics)
            if (v && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    for (const auto& n : names) {
        std::vector<double> v;
        for (const auto& x : rr.rounds)
            if (auto m = x.get(n)) v.push_back(*m);
        r.set(n, median(v));
    }
    if (!rr.ratio.empty()) {
        r.set("throughput_x_none", median(rr.ratio));
        r.set("throughput_x_none_min", *std::min_element(rr.ratio.begin(), rr.ratio.end()));
        r.set("throughput_x_none_max", *std::max_element(rr.ratio.begin(), rr.ratio.end()));
    }
    for (std::size_t k = 0; k < rr.rounds.size(); ++k)
        for (const auto& f : rr.rounds[k].failures)
            r.failures.push_back("round " + std::to_string(k + 1) + ": " + f);
    return r;
}

void print_table(const std::vector<sim::run_result>& rs) {
    std::printf("%-7s %-11s %10s %-22s %8s %8s %8s %8s %6s %8s %6s %9s %9s %9s %9s %8s %8s "
                "%8s\n",
                "pattern", "policy", "items/s", "x none med [min-max]", "soj.p50", "soj.p99",
                "work.p99", "soj.max", ">thr", "inflight", "limit", "stops/s", "p.wake/s",
                "p.sleep/s", "c.wake/s", "p.cpu/it", "c.cpu/it", "sendw.p99");
    for (const auto& r : rs) {
        char ratio[64] = "-";
        if (r.get("throughput_x_none"))
            std::snprintf(ratio, sizeof ratio, "%.3f [%.3f-%.3f]", *r.get("throughput_x_none"),
                          r.get("throughput_x_none_min").value_or(1),
                          r.get("throughput_x_none_max").value_or(1));
        const auto f = [&](const char* m, const char* fmt = "%.4g") {
            return sim::fmt_num(r.get(m), fmt);
        };
        std::printf("%-7s %-11s %10s %-22s %8s %8s %8s %8s %6s %8s %6s %9s %9s %9s %9s %8s "
                    "%8s %8s\n",
                    r.case_label.c_str(),
                    (r.policy + (r.failures.empty() ? "" : " FAILED")).c_str(),
                    f("throughput_pps").c_str(), ratio, f("sojourn_p50_us").c_str(),
                    f("sojourn_p99_us").c_str(), f("to_work_p99_us").c_str(),
                    f("sojourn_max_us").c_str(),
                    f("sojourn_over_threshold", "%.3f").c_str(), f("inflight_mean", "%.3g").c_str(),
                    f("limit_final").c_str(), f("producer_stops_per_s", "%.3g").c_str(),
                    f("producer_wakeups_per_s", "%.3g").c_str(),
                    f("producer_sleeps_per_s", "%.3g").c_str(),
                    f("consumer_wakeups_per_s", "%.3g").c_str(),
                    f("producer_cpu_ns_per_item").c_str(), f("consumer_cpu_ns_per_item").c_str(),
                    f("send_wait_p99_us").c_str());
    }
    std::printf("(times in us; sojourn push to pop, stamped by the ring; work.p99 push to the "
                "start of the item's work, the wait in the consumer's batch included; p.wake/s "
                "producers restarted by the consumer, asleep or still polling; p.sleep/s the "
                "producer's futex sleeps; CPU in ns per item from the threads' CPU clocks; x "
                "none: throughput against none of the same round)\n");
}

/// Sim vs real, per pattern and policy: throughput against none and sojourn p99.
bool print_compare(const std::vector<sim::run_result>& real, const std::vector<sim::run_result>& sim) {
    std::printf("\nsim vs real (thread-ring with the calibrated parameters; goal: |sim x - real x| "
                "/ real x <= 15%%)\n\n");
    std::printf("| pattern | policy | real x none [min-max] | sim x none | off by | real soj.p99 us | "
                "sim soj.p99 us | real c.cpu/it | sim c.cpu/it |\n|---|---|---|---|---|---|---|---|---|\n");
    bool all_within = true;
    std::size_t compared = 0;
    for (const auto& r : real) {
        const sim::run_result* s = nullptr;
        for (const auto& x : sim)
            if (x.case_label == r.case_label && x.policy == r.policy) s = &x;
        if (!s) continue;
        const sim::run_result* none = nullptr;
        for (const auto& x : sim)
            if (x.case_label == r.case_label && x.policy == "none") none = &x;
        if (!r.get("throughput_x_none")) continue; // no real ratio (none moved nothing)
        ++compared;
        const double rx = *r.get("throughput_x_none");
        const double sx = none && none->get("throughput_pps").value_or(0) > 0
                              ? s->get("throughput_pps").value_or(0) / *none->get("throughput_pps")
                              : 0;
        const double off = rx > 0 ? (sx - rx) / rx : 0;
        if (std::fabs(off) > 0.15) all_within = false;
        std::printf("| %s | %s | %.3f [%.3f-%.3f] | %.3f | %+.0f%% | %s | %s | %s | %s |\n",
                    r.case_label.c_str(), r.policy.c_str(), rx,
                    r.get("throughput_x_none_min").value_or(1),
                    r.get("throughput_x_none_max").value_or(1), sx, 100 * off,
                    sim::fmt_num(r.get("sojourn_p99_us")).c_str(),
                    sim::fmt_num(s->get("sojourn_p99_us")).c_str(),
                    sim::fmt_num(r.get("consumer_cpu_ns_per_item")).c_str(),
                    sim::fmt_num(s->get("consumer_cpu_ns_per_item")).c_str());
    }
    if (compared == 0) {
        std::printf("\nnothing to compare: no real run moved an item under none\n");
        return false;
    }
    std::printf("\n%s\n", all_within ? "every policy and pattern within 15%"
                                     : "NOT every policy and pattern within 15% (see MODEL.md, "
                                       "'thread-ring vs pipeline')");
    return all_within;
}

/// A log with room for the whole run (capture_log_entries).
std::unique_ptr<qlimits::capture_log> capture_log_for(const sim::param_values& v) {
    const std::size_t n = capture_log_entries(v.at("warmup-ms") + v.at("duration-ms"));
    return std::make_unique<qlimits::capture_log>(qlimits::capture_capacity{n, n, n});
}

/// A parameter's value as the capture format reads it: plain decimal digits (`%g` writes 1e-05
/// for a threshold of 0.00001, which read_capture refuses), at most 9 decimals, no trailing
/// zeros.
std::string capture_decimal(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9f", x);
    std::string s(buf);
    if (s.find('.') != std::string::npos) {
        s.erase(s.find_last_not_of('0') + 1);
        if (s.back() == '.') s.pop_back();
    }
    return s;
}

/// The capture of one run: what whatif needs to replay it (the workload's shape, the window,
/// this machine's costs) and the channel's counters in the measured window.
bool write_capture_file(const std::string& file, const qlimits::capture_log& log,
                        const sim::policy_row& row, const sim::param_values& v,
                        const sim::param_spec& pattern_spec, const pipe::machine& mach,
                        const pipe::measured& m) {
    std::string pre = "# qlimits-lab pipeline --capture: one real run, the policy wrapped in "
                      "qlimits::capturing\n";
    if (std::ifstream la("/proc/loadavg"); la) { // the machine's state when it was captured
        std::string load;
        la >> load;
        if (!load.empty()) pre += "meta loadavg " + load + "\n";
    }
    // One of several rows of a row parameter ("fixed-64" of --fixed-limit=8,64) is its entry
    // with that value: whatif, given the one value below, names that row by the entry alone.
    pre += "meta policy " + (row.row_value ? row.entry->name : row.name) + "\nmeta pattern " +
           sim::format_value(pattern_spec, v.at("pattern")) + "\n";
    // paced keeps a schedule (an open loop); flood and bursts send as soon as they may.
    pre += v.at("pattern") == 2 ? "meta source open\n" : "meta source closed\n";
    char buf[128];
    for (const char* name : {"ring", "batch"}) {
        std::snprintf(buf, sizeof buf, "meta %s %.10g\n", name, v.at(name));
        pre += buf;
    }
    pre += "param duration-ms " + capture_decimal(v.at("warmup-ms") + v.at("duration-ms")) +
           "\nparam warmup-ms " + capture_decimal(v.at("warmup-ms")) + "\n";
    for (const char* name : {"item-bytes", "sojourn-threshold-us"})
        pre += std::string("param ") + name + " " + capture_decimal(v.at(name)) + "\n";
    // The policy's parameters as it ran, so whatif replays the same policy (a review,
    // 2026-12-06: a capture under fixed-64 replayed `fixed` at the default limit of 8).
    if (!row.entry->row_param.empty())
        pre += "param " + row.entry->row_param + " " +
               capture_decimal(row.row_value ? *row.row_value : v.at(row.entry->row_param)) +
               "\n";
    for (const auto& p : row.entry->params)
        if (p.name != row.entry->row_param)
            if (const auto it = v.find(p.name); it != v.end())
                pre += "param " + p.name + " " + capture_decimal(it->second) + "\n";
    for (const auto& [name, value] : pipe::as_params(mach)) {
        std::snprintf(buf, sizeof buf, "param %s %.3f\n", name.c_str(), value);
        pre += buf;
    }
    const std::pair<const char*, std::uint64_t> stats[] = {
        {"window-items", m.items}, {"window-stops", m.stops},
        {"window-producer-wakeups", m.producer_wakeups},
        {"window-consumer-wakeups", m.consumer_wakeups}};
    for (const auto& [name, count] : stats) {
        std::snprintf(buf, sizeof buf, "stat %s %llu\n", name, static_cast<unsigned long long>(count));
        pre += buf;
    }
    make_parent(file);
    std::ofstream f(file, std::ios::binary);
    qlimits::write_capture(log, [&](std::string_view s) {
        f.write(s.data(), static_cast<std::streamsize>(s.size()));
    }, pre);
    f.close();
    if (!f) {
        std::fprintf(stderr, "qlimits-lab pipeline: cannot write %s\n", file.c_str());
        return false;
    }
    return true;
}

} // namespace

int pipeline_main(int argc, char** argv) {
    const auto specs = pipeline_params();
    sim::param_lists user;
    std::vector<std::string> policy_filter;
    std::string json_file, capture_file, capture_policy = "none";
    bool compare = false, capture_policy_given = false;
    auto refuse = [](const std::string& msg) {
        std::fprintf(stderr, "qlimits-lab pipeline: %s\n", msg.c_str());
        return exit_usage;
    };
    sim::cli_detail::once_only once; // each option at most once, as `run`
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage_text, stdout);
            return exit_ok;
        }
        if (arg == "--list") {
            sim::print_params(specs);
            return exit_ok;
        }
        for (const char* opt : {"--compare-sim", "--capture", "--capture-policy", "--policy", "--json"})
            if (sim::cli_detail::is_opt(arg, opt))
                if (auto e = once(opt)) return refuse(*e);
        if (arg == "--compare-sim") {
            compare = true;
            continue;
        }
        if (sim::cli_detail::is_opt(arg, "--capture")) {
            if (auto e = sim::cli_detail::option_value(argc, argv, i, arg, "--capture",
                                                       capture_file, "a file name"))
                return refuse(*e);
            continue;
        }
        if (arg.rfind("--capture-policy=", 0) == 0) {
            capture_policy = arg.substr(17);
            capture_policy_given = true;
            continue;
        }
        if (arg.rfind("--policy=", 0) == 0) {
            policy_filter = sim::cli_detail::split(arg.substr(9));
            continue;
        }
        if (sim::cli_detail::is_opt(arg, "--json")) {
            if (auto e = sim::cli_detail::option_value(argc, argv, i, arg, "--json", json_file,
                                                       "a file name"))
                return refuse(*e);
            continue;
        }
        if (arg == "--policy" || arg == "--capture-policy")
            return refuse(arg + " needs a value: " + arg + "=VALUE");
        if (auto e = sim::parse_param_arg(specs, arg, user)) return refuse(*e);
    }
    sim::param_lists v = sim::resolve(specs, user);
    {
        // Values each within its range can still ask for more than a run can give: the payload
        // pool beside the ring is (ring + batch + 1) x item-bytes, and after the window the
        // consumer works off what is still queued (up to ring x work-ns) before the run ends.
        const auto largest = [&v](const char* name) {
            const auto& xs = v.at(name);
            return *std::max_element(xs.begin(), xs.end());
        };
        const double pool_bytes = (largest("ring") + largest("batch") + 1) * largest("item-bytes");
        if (pool_bytes > pool_bytes_max)
            return refuse("--ring, --batch and --item-bytes ask for a payload pool of " +
                          sim::fmt_num(pool_bytes / (1 << 20)) + " MiB, over " +
                          sim::fmt_num(pool_bytes_max / (1 << 20)) +
                          " MiB ((ring + batch + 1) x item-bytes)");
        // Items are counted at their take stamps, and a take's work follows it: a take whose
        // work is a good part of the window moves items in or out of it whole (a review,
        // 2026-12-06: 1280 items/s counted from a consumer that cannot do 1000 at 1 ms each,
        // or 0 with the consumer busy throughout). A take's work is at most 5 % of the window.
        const double take_ms =
            std::min(largest("batch"), largest("ring")) * largest("work-ns") / 1e6;
        const double window_ms = *std::min_element(v.at("duration-ms").begin(),
                                                   v.at("duration-ms").end());
        if (take_ms > 0.05 * window_ms)
            return refuse("--batch x --work-ns: a take's work (" + sim::fmt_num(take_ms) +
                          " ms) is over 5 % of --duration-ms (" + sim::fmt_num(window_ms) +
                          " ms): items counted at their takes would not say what the window did");
        const double drain_ms = largest("ring") * largest("work-ns") / 1e6;
        if (drain_ms > drain_ms_max)
            return refuse("--ring x --work-ns: a full ring takes " + sim::fmt_num(drain_ms) +
                          " ms to work off after each run's window, over " +
                          sim::fmt_num(drain_ms_max) + " ms");
        if (!capture_file.empty()) {
            const double bytes = capture_log_bytes(largest("warmup-ms") + largest("duration-ms"));
            if (bytes > capture_bytes_max)
                return refuse("--capture: a log for --warmup-ms + --duration-ms needs " +
                              sim::fmt_num(bytes / (1 << 20)) + " MiB, over " +
                              sim::fmt_num(capture_bytes_max / (1 << 20)) +
                              " MiB (3 M items/s of room); shorten the run");
        }
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
            return refuse("unknown policy '" + f + "' (" + known + ")");
        }
    }
    std::vector<sim::policy_row> chosen;
    for (const auto& r : rows) // none always runs: every other row is measured against it
        if (r.name == "none" || sim::row_selected(policy_filter, r.name)) chosen.push_back(r);
    const std::vector<double> patterns = v.at("pattern");
    const auto repeat = static_cast<std::size_t>(v.at("repeat")[0]);
    if (capture_policy_given && capture_file.empty())
        return refuse("--capture-policy without --capture FILE does nothing");
    if (!capture_file.empty()) {
        if (patterns.size() != 1) return refuse("--capture: give one --pattern");
        bool found = false;
        for (const auto& r : chosen) found = found || r.name == capture_policy;
        if (!found) return refuse("--capture-policy '" + capture_policy + "' is not among the rows run");
    }
    // The output files, once every argument is known good: a path that cannot be written is
    // refused before anything runs, not after every run. Opened for appending, so an existing
    // file keeps its contents until the run writes it.
    // (One file for both is refused first, so the probe below creates nothing for it.)
    if (!json_file.empty() && !capture_file.empty() &&
        sim::cli_detail::same_file(json_file, capture_file))
        return refuse("--json and --capture name one file (" + json_file +
                      "): one would overwrite the other");
    // Both are asked before either is created (noticed 2026-12-06: a good --json and a bad
    // --capture left the json's new directory and an empty file behind).
    for (const std::string* file : {&json_file, &capture_file})
        if (!file->empty() && !could_write(*file)) return refuse("cannot write " + *file);
    for (const std::string* file : {&json_file, &capture_file}) {
        if (file->empty()) continue;
        make_parent(*file);
        if (!std::ofstream(*file, std::ios::app)) return refuse("cannot write " + *file);
    }

    std::vector<std::pair<std::string, std::string>> params;
    for (const auto& p : specs) {
        std::string text;
        for (double x : v.at(p.name)) text += (text.empty() ? "" : ",") + sim::format_value(p, x);
        params.emplace_back(p.name, text);
    }
    const sim::param_spec& pattern_spec =
        *std::find_if(specs.begin(), specs.end(), [](const auto& s) { return s.name == "pattern"; });
    const auto text_of = [&](const char* name) {
        for (const auto& [n, t] : params)
            if (n == name) return t;
        return std::string{};
    };
    const bool tty = isatty(STDERR_FILENO) == 1;
    if (tty) std::fprintf(stderr, "calibrating the busy loop...\n");
    const pipe::busy_work work;
    std::optional<pipe::machine> mach;
    if (compare || !capture_file.empty()) {
        // Calibrated with the ring, batch and item size the runs (and the twin) use.
        sim::param_values first;
        for (const auto& [name, list] : v) first[name] = list.front();
        const pipe::workload first_workload = pipe::workload::from(first);
        if (tty) std::fprintf(stderr, "measuring this machine (calibrate)...\n");
        mach = pipe::measure_machine(work, first_workload);
    }

    // rounds x patterns x rows, each round in its own shuffled order.
    sim::rng order_rng{static_cast<std::uint64_t>(v.at("seed")[0])};
    std::map<std::pair<double, std::string>, row_runs> runs;
    std::vector<std::pair<double, std::size_t>> plan;
    for (double pat : patterns)
        for (std::size_t k = 0; k < chosen.size(); ++k) plan.emplace_back(pat, k);
    std::size_t done = 0;
    for (std::size_t round = 0; round < repeat; ++round) {
        for (std::size_t i = plan.size(); i > 1; --i) // Fisher-Yates with the lab's rng
            std::swap(plan[i - 1], plan[static_cast<std::size_t>(order_rng.below(i))]);
        for (const auto& [pat, k] : plan) {
            const sim::policy_row& row = chosen[k];
            sim::param_values values;
            for (const auto& [name, list] : v) values[name] = list.front();
            values["pattern"] = pat;
            if (row.row_value) values[row.entry->row_param] = *row.row_value;
            if (tty)
                std::fprintf(stderr, "\r[%zu/%zu] round %zu %s %s\033[K", ++done,
                             plan.size() * repeat, round + 1,
                             sim::format_value(pattern_spec, pat).c_str(), row.name.c_str());
            const pipe::measured m =
                pipe::run_real(pipe::workload::from(values), row, values, work, nullptr);
            sim::run_result r = sim::blank_result();
            pipe::report(r, m);
            r.failures = m.failures;
            auto& rr = runs[{pat, row.name}];
            rr.row = row;
            rr.rounds.push_back(std::move(r));
        }
        // Ratios within the round.
        for (double pat : patterns) {
            const double base =
                runs[{pat, "none"}].rounds.back().get("throughput_pps").value_or(0);
            for (const auto& row : chosen) {
                auto& rr = runs[{pat, row.name}];
                if (base > 0) // a round where none moved nothing has no ratio
                    rr.ratio.push_back(rr.rounds.back().get("throughput_pps").value_or(0) / base);
            }
        }
    }
    // The capture: one more run of the capture policy with the log on, kept out of the table and
    // its ratios (in round 1 it slowed `none`, the base of every ratio, by 11-40 %: a review,
    // 2026-12-06); its throughput is printed against its row's median below.
    std::optional<sim::run_result> captured_run;
    if (!capture_file.empty()) {
        const auto row = std::find_if(chosen.begin(), chosen.end(),
                                      [&](const auto& r) { return r.name == capture_policy; });
        sim::param_values values;
        for (const auto& [name, list] : v) values[name] = list.front();
        if (row->row_value) values[row->entry->row_param] = *row->row_value;
        if (tty) std::fprintf(stderr, "\r[capture] %s\033[K", row->name.c_str());
        const std::unique_ptr<qlimits::capture_log> log = capture_log_for(values);
        const pipe::measured m =
            pipe::run_real(pipe::workload::from(values), *row, values, work, log.get());
        if (!write_capture_file(capture_file, *log, *row, values, pattern_spec, *mach, m))
            return exit_failure;
        captured_run = sim::blank_result();
        pipe::report(*captured_run, m);
        captured_run->policy = row->name;
        captured_run->failures = m.failures;
    }
    if (tty) std::fprintf(stderr, "\n");

    std::vector<sim::run_result> results;
    for (double pat : patterns)
        for (const auto& row : chosen)
            results.push_back(summarize(runs[{pat, row.name}], sim::format_value(pattern_spec, pat), params));

    std::printf("pipeline: ring %s, batch %s, %s-byte items, %s ns work per item, %s ms measured "
                "after %s ms warm-up, %zu round%s (machine-dependent: compare the ratios)\n\n",
                text_of("ring").c_str(), text_of("batch").c_str(), text_of("item-bytes").c_str(),
                text_of("work-ns").c_str(), text_of("duration-ms").c_str(),
                text_of("warmup-ms").c_str(),
                repeat, repeat == 1 ? "" : "s");
    print_table(results);
    if (captured_run) {
        double median = 0;
        for (const auto& r : results)
            if (r.policy == captured_run->policy)
                median = r.get("throughput_pps").value_or(0);
        const double pps = captured_run->get("throughput_pps").value_or(0);
        std::printf("\ncapture %s: one more %s run with the capture on, not in the table: %.4g "
                    "items/s, %.3fx the row's median (the capture's own cost)\n",
                    capture_file.c_str(), captured_run->policy.c_str(), pps,
                    median > 0 ? pps / median : 0.0);
    }

    std::vector<std::string> twin_failures;
    if (mach) {
        std::printf("\nthis machine, as calibrate measured it:\n%s", pipe::describe(*mach).c_str());
        std::vector<sim::run_result> simulated;
        const auto tr = sim::tring::params();
        for (double pat : patterns)
            for (const auto& row : chosen) {
                sim::param_values p;
                for (const auto& spec : sim::with_policy_params(tr)) {
                    std::vector<double> d;
                    (void)sim::parse_list(spec, spec.def, d);
                    p[spec.name] = d.front();
                }
                for (const auto& [name, list] : v)
                    if (p.contains(name)) p[name] = list.front();
                for (const auto& [name, value] : pipe::as_params(*mach)) p[name] = value;
                // The pipeline measures --duration-ms after its warm-up; the twin's duration
                // includes the warm-up: the same measured window needs both.
                p["duration-ms"] = p.at("duration-ms") + p.at("warmup-ms");
                p["pattern"] = pat;
                if (row.row_value) p[row.entry->row_param] = *row.row_value;
                sim::tring::model model{p, row};
                sim::run_result r = model.run();
                r.case_label = sim::format_value(pattern_spec, pat);
                if (compare) // without --compare-sim the twin is not the user's question
                    for (const auto& f : r.failures)
                        twin_failures.push_back(r.case_label + " / " + row.name + ": " + f);
                simulated.push_back(std::move(r));
            }
        print_compare(results, simulated);
    }

    if (!json_file.empty() && !write_output("pipeline", json_file, sim::json(results)))
        return exit_failure;
    bool ok = true;
    for (const auto& r : results)
        for (const auto& f : r.failures) {
            std::fprintf(stderr, "qlimits-lab pipeline: CHECK FAILED %s / %s: %s\n",
                         r.case_label.c_str(), r.policy.c_str(), f.c_str());
            ok = false;
        }
    if (captured_run)
        for (const auto& f : captured_run->failures) {
            std::fprintf(stderr, "qlimits-lab pipeline: CHECK FAILED the captured run / %s: %s\n",
                         captured_run->policy.c_str(), f.c_str());
            ok = false;
        }
    // The twin's own checks (conservation, Little's law, liveness) under --compare-sim: a
    // failed one was never read (a review, 2026-12-06).
    for (const auto& r : twin_failures) {
        std::fprintf(stderr, "qlimits-lab pipeline: CHECK FAILED the thread-ring twin: %s\n",
                     r.c_str());
        ok = false;
    }
    return ok ? exit_ok : exit_failure;
}

} // namespace lab
