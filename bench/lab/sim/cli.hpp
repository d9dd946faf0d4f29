// The command line of `qlimits-lab run`: which scenarios, which parameters, which outputs.
// Parsing is separate from running so the tests can check every refusal (and its wording).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "params.hpp"
#include "scenario.hpp"

namespace lab::sim {

struct run_options {
    std::vector<const scenario*> scenarios;
    std::vector<param_lists> params;   ///< the user's values, per selected scenario
    std::vector<std::string> policies; ///< empty: all
    std::string json_file;             ///< empty: none
    std::string csv_dir;               ///< empty: none
    std::string svg_dir = "lab-out";   ///< empty: no plots
    unsigned jobs = 0;                 ///< 0: min(2, hardware threads)
    bool quiet = false;                ///< no progress even on a terminal
};

namespace cli_detail {
inline std::vector<std::string> split(std::string_view s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t c = s.find(',', start);
        out.emplace_back(s.substr(start, c == std::string_view::npos ? s.npos : c - start));
        if (c == std::string_view::npos) return out;
        start = c + 1;
    }
}
inline const param_spec* find_spec(const scenario& sc, std::string_view name) {
    for (const auto& p : sc.params)
        if (p.name == name) return &p;
    return nullptr;
}
/// Whether two paths name one file (an existing file reached by two paths, or one path not
/// yet there spelled two ways): a command that reads one and writes the other, or writes both,
/// would lose one of them (review 2026-12-05: `whatif CAP --json CAP` overwrote the capture,
/// `pipeline --json F --capture F` kept only the JSON).
inline bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec))
        return std::filesystem::equivalent(a, b, ec);
    const auto ca = std::filesystem::weakly_canonical(a, ec);
    if (ec) return a == b;
    const auto cb = std::filesystem::weakly_canonical(b, ec);
    return ec ? a == b : ca == cb;
}
/// Whether `arg` is option `opt`, as `opt` alone or `opt=...`.
inline bool is_opt(std::string_view arg, std::string_view opt) {
    return arg == opt ||
           (arg.size() > opt.size() && arg.substr(0, opt.size()) == opt && arg[opt.size()] == '=');
}
/// The value of option `opt` (`arg` is_opt of it), given as --opt=V or as the next argument
/// (argv[i + 1], and then i moves past it), into `dest`; the refusal otherwise. `what` names
/// the value in the refusal.
inline std::optional<std::string> option_value(int argc, char** argv, int& i,
                                               std::string_view arg, std::string_view opt,
                                               std::string& dest,
                                               const char* what = "a file or directory name") {
    if (arg.size() > opt.size()) {
        dest = std::string{arg.substr(opt.size() + 1)};
    } else {
        if (i + 1 >= argc || std::string_view{argv[i + 1]}.substr(0, 2) == "--")
            return std::string{opt} + " needs a value (" + what + ")";
        dest = argv[++i];
    }
    if (dest.empty()) return std::string{opt} + " needs a non-empty value";
    // --json=--no-svg wrote a file named "--no-svg" (a fuzz of the lab, 2026-12-05): a value
    // that looks like an option is a mistake, in either form.
    if (dest.rfind("--", 0) == 0)
        return std::string{opt} + "=" + dest + ": the value looks like an option";
    return std::nullopt;
}
/// Each option at most once: a second one silently replaced the first (--policy=none
/// --policy=fixed ran only fixed).
class once_only {
public:
    /// The refusal if `opt` was seen before; remembers it otherwise.
    std::optional<std::string> operator()(std::string_view opt) {
        for (const auto& o : seen_)
            if (o == opt) return std::string{opt} + " given twice";
        seen_.emplace_back(opt);
        return std::nullopt;
    }

private:
    std::vector<std::string> seen_;
};
} // namespace cli_detail

/// Parse `run SCENARIO|all [options]` (argv[0] is "run"). Returns the error message on failure.
inline std::optional<std::string> parse_run(int argc, char** argv,
                                            const std::vector<scenario>& known,
                                            run_options& out) {
    using namespace cli_detail;
    if (argc < 2) return std::string{"missing SCENARIO (one of the names 'qlimits-lab list' shows, or all)"};
    const std::string which = argv[1];
    for (const auto& sc : known)
        if (which == "all" || which == sc.name) out.scenarios.push_back(&sc);
    if (out.scenarios.empty()) return "unknown scenario '" + which + "' (see 'qlimits-lab list')";
    out.params.assign(out.scenarios.size(), param_lists{});

    auto value_of = [&](int& i, std::string_view arg, std::string_view opt, std::string& dest,
                        const char* what = "a file or directory name") {
        return option_value(argc, argv, i, arg, opt, dest, what);
    };
    once_only once;

    for (int i = 2; i < argc; ++i) {
        const std::string_view arg = argv[i];
        std::string v;
        if (is_opt(arg, "--json")) {
            if (auto e = once("--json")) return e;
            if (auto e = value_of(i, arg, "--json", out.json_file)) return e;
        } else if (is_opt(arg, "--csv")) {
            if (auto e = once("--csv")) return e;
            if (auto e = value_of(i, arg, "--csv", out.csv_dir)) return e;
        } else if (is_opt(arg, "--svg")) {
            if (auto e = once("--svg")) return e;
            if (auto e = value_of(i, arg, "--svg", out.svg_dir)) return e;
        } else if (arg == "--no-svg") {
            if (auto e = once("--svg")) return "--svg and --no-svg given together, or twice";
            out.svg_dir.clear();
        } else if (arg == "--quiet" || arg == "-q") {
            out.quiet = true;
        } else if (is_opt(arg, "--policy")) {
            if (auto e = once("--policy")) return *e + " (for several policies: --policy=a,b)";
            if (auto e = value_of(i, arg, "--policy", v, "policy names, e.g. none,dql")) return e;
            out.policies = split(v);

        } else if (is_opt(arg, "--jobs")) {
            if (auto e = once("--jobs")) return e;
            if (auto e = value_of(i, arg, "--jobs", v, "a whole number")) return e;
            const std::optional<long> n = plain_count(v, 1, 256);
            if (!n) return "--jobs=" + v + ": expected a whole number in [1, 256]";
            out.jobs = static_cast<unsigned>(*n);
        } else if (arg.size() > 2 && arg.substr(0, 2) == "--") {
            // A model parameter: --name=value, known to at least one selected scenario and
            // valid for every selected scenario that has it.
            const std::size_t eq = arg.find('=');
            const std::string name{arg.substr(2, eq == arg.npos ? arg.npos : eq - 2)};
            bool known_somewhere = false;
            const param_spec* first = nullptr;
            for (std::size_t s = 0; s < out.scenarios.size(); ++s) {
                const param_spec* spec = find_spec(*out.scenarios[s], name);
                if (!spec) continue;
                known_somewhere = true;
                // One value cannot mean bytes in one scenario and items in another: `run all
                // --fixed-limit=8` gave virtio-bql a limit of 8 bytes (a review, 2026-12-05).
                if (first == nullptr) {
                    first = spec;
                } else if ((first->unit == "bytes") != (spec->unit == "bytes")) {
                    std::string where;
                    for (const scenario* sc : out.scenarios)
                        if (const param_spec* p = find_spec(*sc, name))
                            where += (where.empty() ? "" : ", ") + p->unit + " in " + sc->name;
                    return "--" + name + " counts different things (" + where +
                           "): give it to one scenario at a time";
                }
                if (eq == arg.npos) return "--" + name + ": expected --" + name + "=VALUE";
                // The first value would be overridden without a word (review 2026-12-04);
                // several values are a list: --NAME=a,b.
                if (out.params[s].count(name) != 0)
                    return "--" + name + " given twice (for several values: --" + name +
                           "=a,b,...)";
                std::vector<double> vals;
                if (auto e = parse_list(*spec, arg.substr(eq + 1), vals))
                    return "--" + name + " (" + out.scenarios[s]->name + "): " + *e;
                out.params[s][name] = vals;
            }
            if (!known_somewhere)
                return "unknown parameter '--" + name + "' (see 'qlimits-lab list')";
        } else {
            return "unexpected argument '" + std::string{arg} + "'";
        }
    }
    // Policy names are checked once the parameters are known: a list of fixed limits makes rows.
    for (const auto& p : out.policies) {
        bool found = false;
        for (std::size_t s = 0; s < out.scenarios.size(); ++s)
            for (const auto& row : out.scenarios[s]->rows(resolve(out.scenarios[s]->params, out.params[s])))
                found = found || row_selected({p}, row.name);
        if (!found) return "unknown policy '" + p + "' (see 'qlimits-lab list')";
    }
    return std::nullopt;
}

/// `--list` of a command with its own parameters: each with its default, unit and source.
inline void print_params(const std::vector<param_spec>& specs) {
    for (const auto& p : specs)
        std::printf("  --%s=%s  %s\n      source: %s\n", p.name.c_str(), p.def.c_str(),
                    p.unit.c_str(), p.source.c_str());
}

/// One `--name=value[,value...]` argument of `specs` into `user`; the error in words.
inline std::optional<std::string> parse_param_arg(const std::vector<param_spec>& specs,
                                                  const std::string& arg, param_lists& user) {
    const std::size_t eq = arg.find('=');
    const std::string name =
        arg.rfind("--", 0) == 0 ? arg.substr(2, eq == std::string::npos ? eq : eq - 2) : "";
    const param_spec* spec = nullptr;
    for (const auto& p : specs)
        if (p.name == name) spec = &p;
    if (spec == nullptr) return "unknown argument '" + arg + "' (see --help, --list)";
    if (eq == std::string::npos) return "--" + name + ": expected --" + name + "=VALUE";
    std::vector<double> vals;
    if (auto e = parse_list(*spec, std::string_view{arg}.substr(eq + 1), vals))
        return "--" + name + ": " + *e;
    // As `run`: a second value replaced the first without a word.
    if (user.count(name) != 0) return "--" + name + " given twice";
    user[name] = vals;
    return std::nullopt;
}

} // namespace lab::sim
