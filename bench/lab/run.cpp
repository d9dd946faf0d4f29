// qlimits-lab run SCENARIO|all [...] and qlimits-lab list: the policy lab's simulator commands.
// The model lives in sim/ (headers, so the tests drive it directly); this file is the shell:
// arguments, progress, files.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "commands.hpp"
#include "sim/cli.hpp"
#include "output.hpp"
#include "sim/report.hpp"
#include "sim/runner.hpp"
#include "sim/scenarios.hpp"
#include "sim/svg.hpp"

namespace lab {
namespace {

/// One SVG per scenario case, plus an index.html that shows them all.
bool write_plots(const std::string& dir, const std::vector<sim::run_result>& rs,
                 std::vector<std::string>& written) {
    std::vector<std::pair<std::string, std::string>> groups; // (scenario, case) in order
    for (const auto& r : rs) {
        const std::pair<std::string, std::string> key{r.scenario, r.case_label};
        if (std::find(groups.begin(), groups.end(), key) == groups.end()) groups.push_back(key);
    }
    std::string index = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>qlimits-lab"
                        "</title></head><body>\n";
    for (const auto& [sc, cs] : groups) {
        std::vector<sim::run_result> part;
        for (const auto& r : rs)
            if (r.scenario == sc && r.case_label == cs) part.push_back(r);
        const std::string name = sim::slug(sc) + "__" + sim::slug(cs) + ".svg";
        const auto path = std::filesystem::path{dir} / name;
        if (!write_output("run", path, sim::svg_case(part))) return false;
        written.push_back(path.string());
        index += "<p><img src=\"" + name + "\" alt=\"" + sc + " " + cs + "\"></p>\n";
    }
    index += "</body></html>\n";
    return write_output("run", std::filesystem::path{dir} / "index.html", index);
}

} // namespace

int list_main(int argc, char** argv) {
    (void)argv;
    if (argc > 1) {
        std::fprintf(stderr, "usage: qlimits-lab list\n");
        return exit_usage;
    }
    for (const auto& sc : sim::all_scenarios()) {
        std::printf("%s\n  %s\n  policies:\n", sc.name.c_str(), sc.summary.c_str());
        for (const auto& p : sc.rows(sim::resolve(sc.params, {})))
            std::printf("    %-9s %s\n", p.name.c_str(), p.help.c_str());
        std::printf("  parameters (--name=value; a list a,b,c runs one case per value):\n");
        for (const auto& p : sc.params) {
            std::string range;
            if (!p.choices.empty()) {
                for (const auto& c : p.choices) {
                    if (!range.empty()) range += '|';
                    range += c;
                }
            } else {
                range = '[';
                range += sim::fmt_num(p.min, "%.10g");
                range += ", ";
                range += sim::fmt_num(p.max, "%.10g");
                range += ']';
            }
            std::printf("    --%s=%s%s  %s %s%s\n        source: %s\n", p.name.c_str(), p.def.c_str(),
                        p.sweep ? " (list)" : "", range.c_str(), p.unit.c_str(),
                        p.integer && p.choices.empty() ? " (whole)" : "", p.source.c_str());
        }
        std::printf("\n");
    }
    std::printf("run options: --policy=a,b  --json FILE  --csv DIR  --svg DIR (default lab-out)  "
                "--no-svg  --jobs=N  --quiet\n");
    return exit_ok;
}

int run_main(int argc, char** argv) {
    const std::vector<sim::scenario> scenarios = sim::all_scenarios();
    sim::run_options opt;
    if (auto err = sim::parse_run(argc, argv, scenarios, opt)) {
        std::fprintf(stderr, "qlimits-lab run: %s\n", err->c_str());
        return exit_usage;
    }
    const std::vector<sim::job> jobs = sim::plan(opt.scenarios, opt.params, opt.policies);
    if (jobs.empty()) {
        std::fprintf(stderr, "qlimits-lab run: nothing to run (no policy matches)\n");
        return exit_usage;
    }
    for (const auto& j : jobs)
        if (auto err = sim::validate(j)) {
            std::fprintf(stderr, "qlimits-lab run: %s\n", err->c_str());
            return exit_usage;
        }
    unsigned threads = opt.jobs;
    if (threads == 0) threads = std::max(1U, std::min(2U, std::thread::hardware_concurrency()));

    // Progress goes to stderr, and only when a person is watching it.
    const bool show_progress = !opt.quiet && isatty(STDERR_FILENO) == 1;
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = sim::execute(
        jobs, threads, [&](std::size_t done, std::size_t total, const sim::job& j) {
            if (!show_progress) return;
            std::fprintf(stderr, "\r[%zu/%zu] %s %s %s\033[K", done, total, j.sc->name.c_str(),
                         j.sc->case_label(j.params).c_str(), j.row.name.c_str());
            if (done == total) std::fprintf(stderr, "\n");
        });
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::fputs(sim::table(results).c_str(), stdout);
    for (const sim::scenario* sc : opt.scenarios) {
        std::vector<sim::run_result> mine;
        for (const auto& r : results)
            if (r.scenario == sc->name) mine.push_back(r);
        if (sc->compare && !mine.empty()) std::printf("\n%s", sc->compare(mine).c_str());
    }
    std::printf("\n%zu runs in %.1f s on %u thread%s\n", results.size(), wall, threads,
                threads == 1 ? "" : "s");

    bool io_ok = true;
    if (!opt.json_file.empty())
        io_ok = write_output("run", opt.json_file, sim::json(results)) && io_ok;
    if (!opt.csv_dir.empty()) {
        const std::filesystem::path dir{opt.csv_dir};
        io_ok = write_output("run", dir / "summary.csv", sim::csv_summary(results)) && io_ok;
        for (const auto& r : results)
            io_ok = write_output("run",
                                 dir / (sim::slug(r.scenario) + "__" + sim::slug(r.case_label) +
                                        "__" + sim::slug(r.policy) + ".csv"),
                                 sim::csv_series(r)) && io_ok;
    }
    if (!opt.svg_dir.empty()) {
        std::vector<std::string> written;
        io_ok = write_plots(opt.svg_dir, results, written) && io_ok;
        if (io_ok) std::printf("plots: %s/index.html (%zu SVG files)\n", opt.svg_dir.c_str(), written.size());
    }
    std::fflush(stdout);

    // Honesty checks fail loudly: every broken run is named on stderr and the exit code says so.
    bool ok = true;
    for (const auto& r : results)
        for (const auto& f : r.failures) {
            std::fprintf(stderr, "qlimits-lab run: CHECK FAILED %s / %s / %s: %s\n",
                         r.scenario.c_str(), r.case_label.c_str(), r.policy.c_str(), f.c_str());
            ok = false;
        }
    if (!io_ok) return exit_failure;
    return ok ? exit_ok : exit_failure;
}

} // namespace lab
