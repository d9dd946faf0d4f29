// qlimits-lab sweep SCENARIO --PARAM=a..b[:n] (or --PARAM=a,b,c) [run options]: every policy
// across one parameter, a line per value per policy and an SVG curve per case, so a user sees
// where each policy falls off instead of one point.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "output.hpp"
#include "sim/cli.hpp"
#include "sim/report.hpp"
#include "sim/runner.hpp"
#include "sim/scenarios.hpp"
#include "sim/svg.hpp"

namespace lab {
namespace {

/// "a..b" (6 points), "a..b:n" (n points, linear) or "a,b,c"; each value checked against spec.
std::optional<std::string> sweep_values(const sim::param_spec& spec, const std::string& text,
                                        std::vector<double>& out) {
    const std::size_t dots = text.find("..");
    if (dots == std::string::npos) {
        sim::param_spec any = spec;
        any.sweep = true; // a list, whatever the parameter is in `run`
        return sim::parse_list(any, text, out);
    }
    // A range is over numbers: over a named parameter it ran the names' indices and showed
    // them as 0, 1, 2 (review 2026-12-06). A list of names (--qdisc=fq,fifo) sweeps them.
    if (!spec.choices.empty())
        return "--" + spec.name + " takes names, not a range: give them as a list (a,b,c)";
    std::string hi_text = text.substr(dots + 2);
    std::size_t n = 6;
    if (const std::size_t colon = hi_text.find(':'); colon != std::string::npos) {
        const std::string count = hi_text.substr(colon + 1);
        const std::optional<long> v = sim::plain_count(count, 2, 1000);
        if (!v)
            return "'" + count + "': the number of points must be a whole number in [2, 1000]";
        n = static_cast<std::size_t>(*v);
        hi_text = hi_text.substr(0, colon);
    }
    double lo = 0, hi = 0;
    if (auto e = sim::parse_value(spec, text.substr(0, dots), lo)) return e;
    if (auto e = sim::parse_value(spec, hi_text, hi)) return e;
    if (hi <= lo) return std::string{"a range a..b needs a < b"};
    out.clear();
    for (std::size_t i = 0; i < n; ++i) {
        // The last point is `hi` itself: lo + (hi - lo) can miss it by a unit in the last place
        // (0.3..0.9 swept 0.9000000000000001, a value `run` refuses; a lab fuzz, 2026-12-06).
        const double at = static_cast<double>(i) / static_cast<double>(n - 1);
        double v = i + 1 == n ? hi : lo + (hi - lo) * at;
        if (spec.integer) v = std::round(v);
        if (out.empty() || v != out.back()) out.push_back(v);
    }
    return std::nullopt;
}

constexpr const char* usage =
    "usage: qlimits-lab sweep SCENARIO --PARAM=a..b[:n] | --PARAM=a,b,c [--name=value ...]\n"
    "       [--policy=a,b] [--svg DIR | --no-svg] [--json FILE] [--jobs=N]\n";

} // namespace

int sweep_main(int argc, char** argv) {
    const std::vector<sim::scenario> scenarios = sim::all_scenarios();
    if (argc < 2 || std::string{argv[1]} == "--help" || std::string{argv[1]} == "all") {
        std::fputs(usage, argc < 2 || std::string{argv[1]} == "all" ? stderr : stdout);
        return argc >= 2 && std::string{argv[1]} == "--help" ? exit_ok : exit_usage;
    }
    const sim::scenario* sc = nullptr;
    for (const auto& s : scenarios)
        if (s.name == argv[1]) sc = &s;
    if (!sc) {
        std::fprintf(stderr, "qlimits-lab sweep: unknown scenario '%s' (see 'qlimits-lab list')\n", argv[1]);
        return exit_usage;
    }
    // The swept parameter: the one given as a range, or as a list where `run` takes one value.
    std::vector<char*> rest{argv[0], argv[1]};
    std::string swept;
    std::vector<double> values;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        const std::size_t eq = arg.find('=');
        const sim::param_spec* spec =
            arg.rfind("--", 0) == 0 && eq != std::string::npos
                ? sim::cli_detail::find_spec(*sc, std::string_view{arg}.substr(2, eq - 2))
                : nullptr;
        const std::string text = eq == std::string::npos ? "" : arg.substr(eq + 1);
        if (spec && (text.find("..") != std::string::npos ||
                     (!spec->sweep && text.find(',') != std::string::npos))) {
            if (!swept.empty()) {
                std::fprintf(stderr, "qlimits-lab sweep: one parameter at a time (--%s and --%s)\n",
                             swept.c_str(), spec->name.c_str());
                return exit_usage;
            }
            swept = spec->name;
            if (auto e = sweep_values(*spec, text, values)) {
                std::fprintf(stderr, "qlimits-lab sweep: --%s: %s\n", swept.c_str(), e->c_str());
                return exit_usage;
            }
            continue;
        }
        rest.push_back(argv[i]);
    }
    if (swept.empty()) {
        std::fprintf(stderr, "qlimits-lab sweep: give one parameter as a range (--NAME=a..b[:n]), "
                             "or as a list (--NAME=a,b,c) if 'run' takes one value of it\n%s",
                     usage);
        return exit_usage;
    }
    // The swept parameter given again as a plain value would be overridden without a word.
    for (std::size_t i = 2; i < rest.size(); ++i)
        if (std::string_view{rest[i]}.rfind("--" + swept + "=", 0) == 0) {
            std::fprintf(stderr, "qlimits-lab sweep: --%s given twice\n", swept.c_str());
            return exit_usage;
        }
    sim::run_options opt;
    if (auto err = sim::parse_run(static_cast<int>(rest.size()), rest.data(), scenarios, opt)) {
        std::fprintf(stderr, "qlimits-lab sweep: %s\n", err->c_str());
        return exit_usage;
    }
    if (!opt.csv_dir.empty()) {
        std::fprintf(stderr, "qlimits-lab sweep: --csv is for 'run' (time series of one run); a "
                             "sweep writes --json and --svg\n");
        return exit_usage;
    }
    std::vector<sim::job> jobs;
    std::vector<double> job_value;
    std::size_t left_out = 0;
    for (double v : values) {
        std::vector<sim::param_lists> user = opt.params;
        user[0][swept] = {v};
        for (auto& j : sim::plan(opt.scenarios, user, opt.policies)) {
            // A case that does not use the swept value (it sets the parameter itself, or
            // ignores it) would show the same run beside every value: left out.
            if (const auto it = j.params.find(swept);
                (it != j.params.end() && it->second != v) ||
                (j.sc->case_ignores && j.sc->case_ignores(j.params, swept))) {
                ++left_out;
                continue;
            }
            if (auto err = sim::validate(j)) {
                std::fprintf(stderr, "qlimits-lab sweep: %s\n", err->c_str());
                return exit_usage;
            }
            jobs.push_back(std::move(j));
            job_value.push_back(v);
        }
    }
    if (jobs.empty()) {
        // Every case set the swept parameter itself or ignores it (veth-bql's cases set
        // --speed-cases to 0; thread-ring's flood ignores --burst): say so, not "no policy".
        if (left_out != 0)
            std::fprintf(stderr,
                         "qlimits-lab sweep: no case uses --%s (each sets it itself or ignores "
                         "it); choose the cases that do (e.g. --pattern=, --adversarial=)\n",
                         swept.c_str());
        else
            std::fprintf(stderr, "qlimits-lab sweep: nothing to run (no policy matches)\n");
        return exit_usage;
    }
    unsigned threads = opt.jobs;
    if (threads == 0) threads = std::max(1U, std::min(2U, std::thread::hardware_concurrency()));
    const auto results = sim::execute(jobs, threads, {});

    // One line per value per policy, grouped by case then policy: each policy's curve in order.
    std::vector<std::string> cases, policies;
    for (const auto& r : results) {
        if (std::find(cases.begin(), cases.end(), r.case_label) == cases.end()) cases.push_back(r.case_label);
        if (std::find(policies.begin(), policies.end(), r.policy) == policies.end()) policies.push_back(r.policy);
    }
    auto find = [&](const std::string& c, const std::string& p, double v) -> const sim::run_result* {
        for (std::size_t k = 0; k < results.size(); ++k)
            if (results[k].case_label == c && results[k].policy == p && job_value[k] == v) return &results[k];
        return nullptr;
    };
    std::printf("%s: --%s swept over %zu values\n\n", sc->name.c_str(), swept.c_str(), values.size());
    std::printf("%-24s %-10s %12s %12s %8s %10s %10s %9s %9s %9s %9s\n", "case", "policy",
                swept.c_str(), "pps", "x none", "soj.p99us", "probe.p99", "p.wake/s", "c.wake/s",
                "p.cpu/it", "c.cpu/it");
    for (const auto& c : cases)
        for (const auto& p : policies)
            for (double v : values) {
                const sim::run_result* r = find(c, p, v);
                if (!r) continue;
                const sim::run_result* none = find(c, "none", v);
                const auto ratio = none ? sim::detail::ratio(r->get("throughput_pps"),
                                                             none->get("throughput_pps"))
                                        : std::optional<double>{};
                std::printf("%-24s %-10s %12.6g %12s %8s %10s %10s %9s %9s %9s %9s\n", c.c_str(),
                            (p + (r->failures.empty() ? "" : " FAILED")).c_str(), v,
                            sim::fmt_num(r->get("throughput_pps")).c_str(),
                            sim::fmt_num(ratio, "%.3f").c_str(),
                            sim::fmt_num(r->get("sojourn_p99_us")).c_str(),
                            sim::fmt_num(r->get("probe_p99_us")).c_str(),
                            sim::fmt_num(r->get("producer_wakeups_per_s"), "%.3g").c_str(),
                            sim::fmt_num(r->get("consumer_wakeups_per_s"), "%.3g").c_str(),
                            sim::fmt_num(r->get("producer_cpu_ns_per_item")).c_str(),
                            sim::fmt_num(r->get("consumer_cpu_ns_per_item")).c_str());
            }

    bool io_ok = true;
    if (!opt.svg_dir.empty()) {
        for (const auto& c : cases) {
            const auto path = std::filesystem::path{opt.svg_dir} /
                              ("sweep__" + sim::slug(sc->name) + "__" + sim::slug(swept) + "__" +
                               sim::slug(c) + ".svg");
            std::vector<sim::run_result> part;
            std::vector<double> xs;
            for (std::size_t k = 0; k < results.size(); ++k)
                if (results[k].case_label == c) {
                    part.push_back(results[k]);
                    xs.push_back(job_value[k]);
                }
            const bool written =
                write_output("sweep", path, sim::svg_sweep(sc->name + " " + c, swept, part, xs));
            io_ok = written && io_ok;
            if (written) std::printf("\nplot: %s", path.string().c_str());
        }
        std::printf("\n");
    }
    if (!opt.json_file.empty())
        io_ok = write_output("sweep", opt.json_file, sim::json(results)) && io_ok;
    bool ok = io_ok;
    for (const auto& r : results)
        for (const auto& f : r.failures) {
            std::fprintf(stderr, "qlimits-lab sweep: CHECK FAILED %s / %s: %s\n", r.case_label.c_str(),
                         r.policy.c_str(), f.c_str());
            ok = false;
        }
    return ok ? exit_ok : exit_failure;
}

} // namespace lab
