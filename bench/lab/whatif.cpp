// qlimits-lab whatif CAPTURE: what every policy would have done with a captured workload
// (qlimits/capture/recorder.hpp writes one). The captured arrivals and service times are
// replayed through the thread-ring twin (sim/thread_ring.hpp) under each registry policy, with
// the machine's wake-up costs (thread-ring's calibrated defaults, the capture's `param` lines,
// then the command line); each run passes the lab's conservation and Little's-law checks.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "output.hpp"
#include "sim/cli.hpp"
#include "sim/report.hpp"
#include "sim/svg.hpp"
#include "sim/whatif.hpp"

namespace lab {
namespace {

const char* const whatif_usage =
    "usage: qlimits-lab whatif CAPTURE [--policy=a,b] [--source=closed|open] [--work-ns=N]\n"
    "                          [--name=value ...] [--json FILE] [--svg DIR | --no-svg]\n"
    "  Replays a capture (format: qlimits-capture v1, docs/lab.md) through the thread-ring twin\n"
    "  under each policy (default: every registry row) and prints throughput, sojourn p50/p99,\n"
    "  upstream wait p99, wake-ups/s and CPU per item, beside what the capture itself shows.\n"
    "  --source=closed  the producer stalls while stopped (pktgen): each item follows the\n"
    "                   previous send by its captured think time (default, unless the capture\n"
    "                   says 'meta source open')\n"
    "  --source=open    items arrive at their captured times and wait upstream while stopped\n"
    "  --overhead=capture|calibrated  the consumer's cost per item besides its work: measured\n"
    "                   in the capture (default, where it shows a backlog) or consumer-item-ns\n"
    "  --work-ns=N      consumer work per item, instead of the capture's service records\n"
    "  --list           thread-ring's parameters (machine, ring, batch, window, policy knobs)\n"
    "  Exit: 0 ok, 1 a run's checks failed (row FAILED), 2 bad arguments or a malformed capture.\n";

/// thread-ring's parameters that shape its own producer: a replay's producer is the capture.
void print_rows(const std::vector<sim::run_result>& rs, double captured_pps) {
    std::printf("%-14s %10s %8s %9s %9s %10s %9s %9s %9s %9s %7s\n", "policy", "items/s", "x capt.",
                "soj.p50", "soj.p99", "upstr.p99", "p.wake/s", "c.wake/s", "p.cpu/it", "c.cpu/it",
                "limit");
    for (const auto& r : rs) {
        const auto f = [&](const char* m, const char* fmt = "%.4g") {
            return sim::fmt_num(r.get(m), fmt);
        };
        const double pps = r.get("throughput_pps").value_or(0);
        char x[32];
        std::snprintf(x, sizeof x, "%.3f", captured_pps > 0 ? pps / captured_pps : 0.0);
        std::printf(
            "%-14s %10s %8s %9s %9s %10s %9s %9s %9s %9s %7s\n",
            (r.policy + (r.failures.empty() ? "" : " FAILED")).c_str(), f("throughput_pps").c_str(),
            x, f("sojourn_p50_us").c_str(), f("sojourn_p99_us").c_str(),
            f("send_wait_p99_us").c_str(), f("producer_wakeups_per_s", "%.3g").c_str(),
            f("consumer_wakeups_per_s", "%.3g").c_str(), f("producer_cpu_ns_per_item").c_str(),
            f("consumer_cpu_ns_per_item").c_str(), f("limit_final").c_str());
    }
    std::printf("(times in us, CPU in ns per item; 'captured' is the capture itself, no model; "
                "upstr.p99: wanted to entered)\n");
}

} // namespace

int whatif_main(int argc, char** argv) {
    const auto refuse = [](const std::string& msg) {
        std::fprintf(stderr, "qlimits-lab whatif: %s\n", msg.c_str());
        return exit_usage;
    };
    const auto specs = sim::whatif::params();
    std::string file, json_file, svg_dir = "lab-out";
    std::vector<std::string> filter;
    std::optional<sim::tring::trace_source> source;
    bool calibrated_overhead = false;
    std::optional<double> work_ns;
    sim::param_lists user;
    sim::cli_detail::once_only once; // each option at most once, as `run`
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(whatif_usage, stdout);
            return exit_ok;
        }
        if (arg == "--list") {
            // What a replay takes: not the synthetic producer's shape (refused below) nor its
            // work (--work-ns above); the run's length defaults to the capture's span.
            std::vector<sim::param_spec> shown;
            for (sim::param_spec s : specs) {
                if (!sim::whatif::is_replayed(s.name))
                    continue;
                // The sources say so too (they named the synthetic run's 1.5 s: a review).
                if (s.name == "duration-ms") {
                    s.def = "(the capture's span, at least the shortest allowed, 10)";
                    s.source = "the capture: its span, so the replay covers what was captured";
                } else if (s.name == "warmup-ms") {
                    s.def = "(a tenth of the duration)";
                    s.source = "modelling choice: a tenth of the replay's length";
                } else if (s.name == "ring" || s.name == "batch") {
                    s.source += "; a capture's 'meta " + s.name +
                                "' line replaces it, and --" + s.name + " both";
                }
                shown.push_back(s);
            }
            sim::print_params(shown);
            return exit_ok;
        }
        for (const char* opt : {"--policy", "--source", "--overhead", "--work-ns", "--json"})
            if (sim::cli_detail::is_opt(arg, opt))
                if (auto e = once(opt)) return refuse(*e);
        if (sim::cli_detail::is_opt(arg, "--svg") || arg == "--no-svg")
            if (once("--svg")) return refuse("--svg and --no-svg given together, or twice");
        if (arg.rfind("--policy=", 0) == 0) {
            filter = sim::cli_detail::split(arg.substr(9));
            continue;
        }
        if (arg == "--source=closed" || arg == "--source=open") {
            source = arg == "--source=open" ? sim::tring::trace_source::open
                                            : sim::tring::trace_source::closed;
            continue;
        }
        if (arg.rfind("--source=", 0) == 0)
            return refuse("--source: expected closed or open");
        if (arg == "--overhead=capture" || arg == "--overhead=calibrated") {
            calibrated_overhead = arg == "--overhead=calibrated";
            continue;
        }
        if (arg.rfind("--overhead=", 0) == 0)
            return refuse("--overhead: expected capture or calibrated");
        if (arg.rfind("--work-ns=", 0) == 0) {
            const sim::param_spec w{"work-ns", "0", 0, 1e9, false, false, {}, "ns", ""};
            double v = 0;
            if (auto e = sim::parse_value(w, arg.substr(10), v))
                return refuse("--work-ns: " + *e);
            work_ns = v;
            continue;
        }
        if (arg == "--no-svg") {
            svg_dir.clear();
            continue;
        }
        if (sim::cli_detail::is_opt(arg, "--json") || sim::cli_detail::is_opt(arg, "--svg")) {
            const bool json = arg.rfind("--json", 0) == 0;
            if (auto e = sim::cli_detail::option_value(argc, argv, i, arg, json ? "--json" : "--svg",
                                                       json ? json_file : svg_dir))
                return refuse(*e);
            continue;
        }
        if (arg == "--policy" || arg == "--source" || arg == "--overhead" || arg == "--work-ns")
            return refuse(arg + " needs a value: " + arg + "=VALUE");
        if (arg.size() > 1 && arg[0] == '-' && arg.rfind("--", 0) != 0)
            return refuse("unknown option '" + arg + "' (see --help)");
        if (arg.rfind("--", 0) != 0) {
            if (!file.empty())
                return refuse("one capture at a time ('" + arg + "')");
            file = arg;
            continue;
        }
        if (auto e = sim::parse_param_arg(specs, arg, user))
            return refuse(*e);
        // The capture is the producer: the synthetic producer's shape does not apply.
        if (const std::size_t eq = arg.find('=');
            eq != std::string::npos &&
            sim::whatif::is_producer_shape(std::string_view{arg}.substr(2, eq - 2)))
            return refuse(arg.substr(0, eq) +
                          " shapes thread-ring's own producer; a replay's producer is the capture");
        if (const std::size_t eq = arg.find('=');
            eq != std::string::npos &&
            sim::whatif::is_unused_scale(std::string_view{arg}.substr(2, eq - 2)))
            return refuse(arg.substr(0, eq) +
                          " scales thread-ring's synthetic work; a replay's work is the capture's "
                          "service times, or --work-ns as given");
    }
    if (file.empty())
        return refuse("missing CAPTURE (see --help)");

    // A directory opens, and read as an empty capture.
    std::error_code dir_error;
    if (std::filesystem::is_directory(file, dir_error))
        return refuse("cannot read " + file + ": a directory");
    if (!json_file.empty() && sim::cli_detail::same_file(file, json_file))
        return refuse("--json " + json_file + " is the capture itself: it would be overwritten");
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return refuse("cannot read " + file);
    // A read that fails part way must not parse as a shorter capture (review 2026-12-05:
    // `whatif /proc/self/mem` was "empty"): read() reports it as badbit.
    std::string text;
    for (char buf[1 << 16]; in.read(buf, sizeof buf) || in.gcount() > 0;)
        text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (in.bad())
        return refuse("cannot read " + file + ": a read error");
    qlimits::capture_data cap;
    if (const auto res = qlimits::read_capture(text, cap); !res.ok)
        return refuse(file + ":" + std::to_string(res.line) + ": " + res.reason);
    sim::trace_workload w;
    if (auto e = sim::make_trace_workload(cap, work_ns, w))
        return refuse(file + ": " + *e);
    if (calibrated_overhead)
        w.consumer_gap.reset();
    if (!source) {
        const std::string m = cap.meta_or("source", "closed");
        if (m != "closed" && m != "open")
            return refuse(file + ": meta source: expected closed or open");
        source = m == "open" ? sim::tring::trace_source::open : sim::tring::trace_source::closed;
    }
    sim::param_values values;
    if (auto e = sim::whatif::values_for(cap, w, user, values))
        return refuse(file + ": " + *e);
    // A capture written without its ring's size or the consumer's take (write_capture()'s
    // preamble) replays the thread-ring defaults: say so, as a new user's capture of a
    // 1024-slot ring otherwise replayed as 256 without a word (a review, 2026-12-05).
    for (const char* key : {"ring", "batch"}) {
        const auto given = user.find(key);
        if (cap.meta_or(key).empty() && (given == user.end() || given->second.empty()))
            std::fprintf(stderr,
                         "qlimits-lab whatif: note: %s has no 'meta %s' line and no --%s was "
                         "given: replaying with %s %g, the default (write_capture()'s preamble "
                         "can record it)\n",
                         file.c_str(), key, key, key, values[key]);
    }

    sim::param_lists lists;
    for (const auto& [n, v] : values)
        lists[n] = {v};
    if (auto it = user.find("fixed-limit"); it != user.end())
        lists["fixed-limit"] = it->second;
    const auto rows =
        sim::registry_rows(sim::tring::completions(), sim::completion_mode::per_poll, lists);
    for (const auto& f : filter) {
        bool found = false;
        for (const auto& r : rows)
            found = found || sim::row_selected({f}, r.name);
        if (!found)
            return refuse("unknown policy '" + f + "'");
    }

    const char* const src = *source == sim::tring::trace_source::open ? "open" : "closed";
    char overhead[96];
    if (const auto o = sim::consumer_overhead(w, values["wake-ns"], values["wake-call-ns"]))
        std::snprintf(overhead, sizeof overhead, "%.4g ns per item, from the capture", *o);
    else
        std::snprintf(overhead, sizeof overhead, "consumer-item-ns %g", values["consumer-item-ns"]);
    // The capture's words are quoted as its reader quotes a bad field (at most 32 bytes, control
    // bytes as \xHH): a review (2026-12-06) had an escape sequence reach the terminal raw.
    const std::string captured_policy = cap.meta_or("policy");
    const std::string policy_shown = captured_policy.empty()
                                         ? std::string{"(unnamed policy)"}
                                         : qlimits::detail::quoted_field(captured_policy);
    std::printf("whatif %s: %zu items over %.1f ms (dropped: %llu items, %llu completions, %llu "
                "services), captured under %s; %s loop; replay %g ms, %g ms warm-up; ring %g, "
                "batch %g; wake-ns %g, wake-call-ns %g, sleep-call-ns %g; consumer overhead %s\n\n",
                file.c_str(), w.size(), static_cast<double>(w.span) / 1e6,
                static_cast<unsigned long long>(cap.dropped_items),
                static_cast<unsigned long long>(cap.dropped_completions),
                static_cast<unsigned long long>(cap.dropped_services),
                policy_shown.c_str(), src, values["duration-ms"],
                values["warmup-ms"], values["ring"], values["batch"], values["wake-ns"],
                values["wake-call-ns"], values["sleep-call-ns"], overhead);
    std::vector<sim::run_result> results;
    results.push_back(sim::whatif::observed(cap, values));
    for (const auto& row : rows) {
        if (!sim::row_selected(filter, row.name))
            continue;
        sim::run_result r = sim::whatif::replay(w, values, row, *source);
        r.case_label = std::filesystem::path(file).filename().string() + " " + src;
        for (const auto& [n, v] : values)
            if (sim::whatif::is_replayed(n))
                r.params.emplace_back(n, sim::fmt_num(v, "%.10g"));
        if (work_ns)
            r.params.emplace_back("work-ns", sim::fmt_num(*work_ns, "%.10g"));
        results.push_back(std::move(r));
    }
    results.front().case_label = results.size() > 1 ? results[1].case_label : file;
    // An empty window (a warm-up past the capture's last completion) leaves the reference row
    // all zeros: say why, as the ratios to it mean nothing then (review 2026-12-05).
    if (!cap.items.empty() && cap.completions.empty())
        std::fprintf(stderr, "qlimits-lab whatif: note: the capture has no completion ('c') "
                             "records: the 'captured' row is empty\n");
    else if (!cap.items.empty() && results.front().get("throughput_pps").value_or(0) == 0)
        std::fprintf(stderr,
                     "qlimits-lab whatif: note: no captured item completes between the warm-up "
                     "(%g ms) and the end of the capture or the replay (%g ms): the 'captured' "
                     "row is empty; a shorter --warmup-ms measures it\n",
                     values["warmup-ms"], values["duration-ms"]);
    print_rows(results, results.front().get("throughput_pps").value_or(0));
    // Two ways a replay can be far from what it replays, each said rather than left to the
    // reader (review 2026-12-06).
    // A producer that never called log.wanted(): every item "wanted" at its entry, so a hold by
    // the captured policy reads as the producer's own time (closed loop) or as a late arrival
    // (open loop), and no policy replays faster than the capture.
    bool any_wanted = false;
    for (const auto& it : cap.items)
        any_wanted = any_wanted || it.wanted_ns != it.entered_ns;
    if (!any_wanted)
        std::fprintf(stderr,
                     "qlimits-lab whatif: note: no item of %s was wanted before it entered the "
                     "ring (the producer did not call log.wanted()?): the captured policy's "
                     "holds then count as the producer's own time, and no replay can be faster "
                     "than the capture\n",
                     file.c_str());
    // The captured policy replayed: the model's error on this program and machine, which the
    // other rows share. (The proof runs' goal is +-20 %, scripts/whatif_proof.sh; docs/lab.md
    // has how far they are from it.)
    bool known_policy = false;
    for (const auto& row : rows)
        known_policy = known_policy || row.name == captured_policy;
    if (!captured_policy.empty() && !known_policy)
        std::fprintf(stderr,
                     "qlimits-lab whatif: note: 'meta policy' %s names no row whatif replays, "
                     "so no replay of the captured policy stands beside the capture\n",
                     policy_shown.c_str());
    if (const auto x = sim::whatif::own_replay_off(results, captured_policy))
        std::fprintf(stderr,
                     "qlimits-lab whatif: note: the replay of the captured policy (%s) gives "
                     "%.3gx the captured throughput: the twin misses costs of this program or "
                     "machine (docs/lab.md, \"What-if\"); compare the other rows with that "
                     "row, not with the capture\n",
                     captured_policy.c_str(), *x);

    bool ok = true;
    if (!json_file.empty()) ok = write_output("whatif", json_file, sim::json(results));
    if (!svg_dir.empty()) {
        std::vector<sim::run_result> plotted(results.begin() + 1, results.end());
        const auto path =
            std::filesystem::path{svg_dir} /
            ("whatif__" + sim::slug(plotted.empty() ? file : plotted.front().case_label) + ".svg");
        if (write_output("whatif", path, sim::svg_case(plotted)))
            std::printf("plot: %s\n", path.string().c_str());
        else
            ok = false;
    }
    for (const auto& r : results)
        for (const auto& f : r.failures) {
            std::fprintf(stderr, "qlimits-lab whatif: CHECK FAILED %s: %s\n", r.policy.c_str(),
                         f.c_str());
            ok = false;
        }
    return ok ? exit_ok : exit_failure;
}

} // namespace lab
