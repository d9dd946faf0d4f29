// The lab's interfaces: parameter parsing and its refusals (exit code 2 from the binary), the
// parameter table itself, and the --json schema.
#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "../../bench/lab/output.hpp"
#include "../../bench/lab/sim/cli.hpp"
#include "qlimits/capture/format.hpp"
#include "../../bench/lab/sim/report.hpp"
#include "../../bench/lab/sim/runner.hpp"
#include "../../bench/lab/sim/scenarios.hpp"

using namespace lab::sim;

namespace {
// A path in the temporary directory of this process's own: two suites run at once on one
// machine (two build trees, or two ctest runs) must not share the lab's output files.
std::filesystem::path scratch_path(const std::string& name) {
    return std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()));
}
std::optional<std::string> parse(std::vector<std::string> args, run_options& out) {
    static const std::vector<scenario> all = all_scenarios();
    args.insert(args.begin(), "run");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return parse_run(static_cast<int>(argv.size()), argv.data(), all, out);
}
// The lab sits at <build>/bench/qlimits-lab next to <build>/tests/qlimits_tests; empty if not.
// Missing in a build that has it (QLIMITS_TEST_LAB_BUILT, tests/CMakeLists.txt) is a failure;
// in a build without the lab, or a test compiled by hand, the cases that need it are skipped.
std::filesystem::path lab_binary() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto lab = self.parent_path().parent_path() / "bench" / "qlimits-lab";
    if (ec || !std::filesystem::exists(lab)) {
#if defined(QLIMITS_TEST_LAB_BUILT)
        FAIL_CHECK("qlimits-lab is part of this build but not at " << lab.string());
#else
        MESSAGE("qlimits-lab not built next to the tests; skipped");
#endif
        return {};
    }
    return lab;
}
/// Run the lab with `args`, its output in `out`; check it exits with `want`; return the output.
std::string run_lab(const std::filesystem::path& lab, const std::filesystem::path& out,
                    const std::string& args, int want) {
    const std::string cmd = lab.string() + " " + args + " >" + out.string() + " 2>&1";
    const int status = std::system(cmd.c_str());
    std::ifstream f(out);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    INFO(args << "\n" << text);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == want);
    return text;
}
std::string error_of(std::vector<std::string> args) {
    run_options o;
    const auto e = parse(std::move(args), o);
    return e ? *e : std::string{};
}

// A small JSON reader: enough to check the --json output's structure.
struct jvalue {
    enum kind_t { null_v, number, string, array, object, boolean } kind = null_v;
    double num = 0;
    std::string str;
    std::vector<jvalue> items;
    // Keys and values side by side: std::pair of an incomplete type is not allowed.
    std::vector<std::string> keys;
    std::vector<jvalue> values;
    [[nodiscard]] const jvalue* at(const std::string& k) const {
        for (std::size_t n = 0; n < keys.size(); ++n)
            if (keys[n] == k) return &values[n];
        return nullptr;
    }
};
struct jparser {
    const std::string& s;
    std::size_t i = 0;
    void ws() {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    }
    bool lit(const char* w) {
        const std::string t{w};
        if (s.compare(i, t.size(), t) != 0) return false;
        i += t.size();
        return true;
    }
    bool str(std::string& out) {
        if (s[i] != '"') return false;
        ++i;
        while (i < s.size() && s[i] != '"') {
            if (s[i] == '\\') ++i;
            out += s[i++];
        }
        return i++ < s.size();
    }
    bool value(jvalue& v) {
        ws();
        if (i >= s.size()) return false;
        if (s[i] == '{') {
            v.kind = jvalue::object;
            ++i;
            ws();
            if (s[i] == '}') return ++i, true;
            for (;;) {
                ws();
                std::string k;
                if (!str(k)) return false;
                ws();
                if (s[i++] != ':') return false;
                jvalue m;
                if (!value(m)) return false;
                v.keys.push_back(k);
                v.values.push_back(std::move(m));
                ws();
                if (s[i] == ',') { ++i; continue; }
                if (s[i] == '}') return ++i, true;
                return false;
            }
        }
        if (s[i] == '[') {
            v.kind = jvalue::array;
            ++i;
            ws();
            if (s[i] == ']') return ++i, true;
            for (;;) {
                jvalue m;
                if (!value(m)) return false;
                v.items.push_back(std::move(m));
                ws();
                if (s[i] == ',') { ++i; continue; }
                if (s[i] == ']') return ++i, true;
                return false;
            }
        }
        if (s[i] == '"') {
            v.kind = jvalue::string;
            return str(v.str);
        }
        if (lit("null")) return v.kind = jvalue::null_v, true;
        if (lit("true") || lit("false")) return v.kind = jvalue::boolean, true;
        char* end = nullptr;
        v.num = std::strtod(s.c_str() + i, &end);
        if (end == s.c_str() + i) return false;
        v.kind = jvalue::number;
        i = static_cast<std::size_t>(end - s.c_str());
        return true;
    }
};
} // namespace

TEST_CASE("lab params: every default parses, is in range, and names its source") {
    for (const auto& sc : all_scenarios()) {
        for (const auto& p : sc.params) {
            INFO(sc.name << " --" << p.name);
            std::vector<double> v;
            CHECK_FALSE(parse_list(p, p.def, v).has_value());
            CHECK_FALSE(p.source.empty());
        }
        CHECK_FALSE(sc.rows(resolve(sc.params, {})).empty());
    }
}

TEST_CASE("lab run arguments: accepted forms") {
    run_options o;
    REQUIRE_FALSE(parse({"all", "--seed=7", "--nrules=0,3500", "--json", "x.json", "--csv=d",
                         "--svg", "plots", "--policy=none,dql", "--jobs=1", "--qdisc=fifo"},
                        o)
                      .has_value());
    CHECK(o.scenarios.size() == all_scenarios().size());
    CHECK(o.json_file == "x.json");
    CHECK(o.csv_dir == "d");
    CHECK(o.svg_dir == "plots");
    CHECK(o.jobs == 1);
    CHECK(o.policies == std::vector<std::string>{"none", "dql"});
    // Each scenario got only the parameters it knows.
    CHECK(o.params[0].at("seed") == std::vector<double>{7});
    CHECK(o.params[0].contains("qdisc"));
    CHECK_FALSE(o.params[0].contains("nrules"));
    CHECK(o.params[1].at("nrules") == std::vector<double>{0, 3500});
    run_options z; // leading zeros are digits; "-0" is 0 (it printed as -0 in case names)
    REQUIRE_FALSE(parse({"veth-bql", "--jobs=002", "--nrules=-0"}, z).has_value());
    CHECK(z.jobs == 2);
    REQUIRE(z.params[0].at("nrules").size() == 1);
    CHECK_FALSE(std::signbit(z.params[0].at("nrules")[0]));
    run_options d;
    REQUIRE_FALSE(parse({"veth-bql"}, d).has_value());
    CHECK(d.svg_dir == "lab-out");
    run_options n;
    REQUIRE_FALSE(parse({"veth-bql", "--no-svg"}, n).has_value());
    CHECK(n.svg_dir.empty());
}

TEST_CASE("lab run arguments: refusals say what is wrong") {
    CHECK(error_of({"veth-bql", "--frobnicate=3"}).find("unknown parameter '--frobnicate'") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--ring=0"}).find("out of range") != std::string::npos);
    CHECK(error_of({"veth-bql", "--ring=300000"}).find("out of range") != std::string::npos);
    CHECK(error_of({"veth-bql", "--ring=12abc"}).find("not a number") != std::string::npos);
    CHECK(error_of({"veth-bql", "--ring=2.5"}).find("not a whole number") != std::string::npos);
    // A fraction that strtod rounds to a whole double is still a fraction (review 2026-12-06:
    // --nrules=1.0000000000000001 ran as nrules=1); whole forms of any spelling are taken.
    CHECK(error_of({"veth-bql", "--ring=64.0000000000000001"}).find("not a whole number") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--nrules=1e-30"}).find("not a whole number") !=
          std::string::npos);
    for (const char* whole : {"--ring=64.000", "--ring=6.4e1", "--ring=640e-1", "--nrules=-0",
                              "--nrules=0.0e-3"}) {
        CAPTURE(whole);
        CHECK(error_of({"veth-bql", whole}).empty());
    }
    CHECK(error_of({"veth-bql", "--ring="}).find("empty") != std::string::npos);
    CHECK(error_of({"veth-bql", "--ring=8,16"}).find("one value") != std::string::npos);
    // A value given twice ran its case twice (review 2026-12-03).
    CHECK(error_of({"veth-bql", "--fixed-limit=8,16,8"}).find("gives 8 twice") != std::string::npos);
    // A parameter given twice kept the last value without a word (review 2026-12-04).
    CHECK(error_of({"veth-bql", "--ring=1", "--ring=300"}).find("--ring given twice") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--ring"}).find("--ring=VALUE") != std::string::npos);
    // An option given twice kept the last one without a word, and an option's value could be
    // another option (a fuzz of the lab, 2026-12-05: --policy=none --policy=fixed ran only
    // fixed; --json=--no-svg wrote a file named "--no-svg").
    CHECK(error_of({"veth-bql", "--policy=none", "--policy=fixed"}).find("--policy given twice") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--json", "a.json", "--json=b.json"}).find("--json given twice") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--jobs=1", "--jobs=2"}).find("--jobs given twice") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--no-svg", "--svg=x"}).find("--svg given twice") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--svg=x", "--no-svg"}).find("--no-svg") != std::string::npos);
    CHECK(error_of({"veth-bql", "--json=--no-svg"}).find("looks like an option") !=
          std::string::npos);
    CHECK(error_of({"virtio-bql", "--qdisc=red"}).find("not one of") != std::string::npos);
    CHECK(error_of({"virtio-bql", "--nrules=0"}).find("unknown parameter") != std::string::npos);
    CHECK(error_of({"nope"}).find("unknown scenario") != std::string::npos);
    CHECK(error_of({"veth-bql", "--policy=magic"}).find("unknown policy") != std::string::npos);
    CHECK(error_of({"veth-bql", "--jobs=0"}).find("--jobs") != std::string::npos);
    // review 2026-12-06: strtol alone took a sign and leading blanks
    for (const char* j : {"--jobs=+3", "--jobs= 3", "--jobs=3x", "--jobs=-1", "--jobs=257",
                          "--jobs=99999999999999999999"})
        CHECK(error_of({"veth-bql", j}).find("--jobs") != std::string::npos);
    CHECK(error_of({"veth-bql", "--json"}).find("needs a value") != std::string::npos);
    CHECK(error_of({"veth-bql", "--policy"}).find("policy names") != std::string::npos);
    CHECK(error_of({"veth-bql", "stray"}).find("unexpected argument") != std::string::npos);
    CHECK(error_of({"veth-bql", "--jitter=nan"}).find("not a number") != std::string::npos);
    // strtod's other forms are not numbers here; digits no double holds are not rounded.
    CHECK(error_of({"veth-bql", "--duration-ms=0x14"}).find("not a number") != std::string::npos);
    CHECK(error_of({"veth-bql", "--duration-ms= 20"}).find("not a number") != std::string::npos);
    CHECK(error_of({"veth-bql", "--seed=1000000000000000001"}).find("exactly") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--seed=+1000000000000000001"}).find("exactly") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--seed=1000000000000000000"}).empty());
    // E-notation that denotes a whole number a double holds is exact (was refused until
    // 2026-12-05); one digit past a double's is not.
    CHECK(error_of({"veth-bql", "--seed=1e18"}).empty());
    CHECK(error_of({"veth-bql", "--seed=1.5e17"}).empty());
    CHECK(error_of({"veth-bql", "--seed=+1E18"}).empty());
    CHECK(error_of({"veth-bql", "--seed=1.000000000000000001e18"}).find("exactly") !=
          std::string::npos);
    CHECK(error_of({"veth-bql", "--seed=1e16"}).empty());
    CHECK(error_of({"veth-bql", "--seed=10000000000000001e1"}).find("exactly") !=
          std::string::npos);
    // A range's bounds are printed as they are, not rounded (was "[0, 1.87905e+09]").
    CHECK(error_of({"virtio-bql", "--fixed-limit=1879048193"})
              .find("out of range [0, 1879048192]") != std::string::npos);
    // Out of range is said before exactness (and converts nothing beyond 2^64: UBSan in CI).
    CHECK(error_of({"veth-bql", "--seed=99999999999999999999"}).find("out of range") !=
          std::string::npos);
    // 2^53 + 1 reads as 2^53: refused too (it was taken, rounded, by a '>' that let 2^53 by).
    CHECK(error_of({"veth-bql", "--seed=9007199254740993"}).find("exactly") != std::string::npos);
    CHECK(error_of({"veth-bql", "--seed=9007199254740992"}).empty());
    CHECK_FALSE(error_of({}).empty());
}

TEST_CASE("lab params: the whole number a text denotes, and the shortest text of a value") {
    CHECK(whole_digits("1e18") == std::string(18, '0').insert(0, "1"));
    CHECK(whole_digits("1.5e3") == "1500");
    CHECK(whole_digits("+0012") == "12");
    CHECK(whole_digits("120e-1") == "12");
    CHECK(whole_digits("0.0e-3") == "0");
    CHECK(whole_digits("0") == "0");
    CHECK_FALSE(whole_digits("1.5").has_value());
    CHECK_FALSE(whole_digits("125e-2").has_value());
    CHECK_FALSE(whole_digits("-3").has_value());
    // Review 2026-12-05: an exponent's leading zeros made it "too long" (1e00018 refused as
    // inexact, though it is 1e18); a long exponent after them still is one.
    CHECK(whole_digits("1e00018") == std::string(18, '0').insert(0, "1"));
    CHECK(whole_digits("1e+0003") == "1000");
    CHECK(whole_digits("5e-000") == "5");
    CHECK_FALSE(whole_digits("1e10000").has_value());
    CHECK_FALSE(whole_digits("1e+").has_value());
    CHECK_FALSE(whole_digits("1e-").has_value());
    CHECK(shortest_text(1879048192) == "1879048192");
    CHECK(shortest_text(0.9) == "0.9");
    CHECK(shortest_text(1e18) == "1000000000000000000");
    CHECK(shortest_text(123456789012) == "123456789012");
    // Whole numbers in plain digits (a review, 2026-12-05: 10 printed as 1e+01, in ranges,
    // headers and the JSON's params).
    CHECK(shortest_text(10) == "10");
    CHECK(shortest_text(1000) == "1000");
    CHECK(shortest_text(0) == "0");
    CHECK(shortest_text(10.39) == "10.39");
    CHECK(shortest_text(2.5e-7) == "2.5e-07");
    CHECK(shortest_text(1e300) == "1e+300");
}

TEST_CASE("lab outputs: could_write asks without creating anything") {
    std::error_code ec;
    const auto dir = scratch_path("qlimits_lab_could_write");
    std::filesystem::remove_all(dir, ec);
    std::filesystem::create_directories(dir, ec);
    const auto file = dir / "f.txt";
    std::ofstream(file) << "x";
    CHECK(lab::could_write(file));                   // an existing file
    CHECK_FALSE(lab::could_write(dir));              // a directory is not a file to write
    CHECK(lab::could_write(dir / "a" / "b" / "c.json")); // missing parents would be made...
    CHECK_FALSE(std::filesystem::exists(dir / "a")); // ...but are not made by asking
    CHECK_FALSE(lab::could_write("/dev/null/dir/p.json")); // under a file
    CHECK_FALSE(lab::could_write(file / "under_a_file.json"));
    CHECK(lab::could_write("relative_name_in_cwd.json") == (::access(".", W_OK | X_OK) == 0));
    std::ifstream in(file);
    CHECK(std::string((std::istreambuf_iterator<char>(in)), {}) == "x"); // untouched
    std::filesystem::remove_all(dir, ec);
}

TEST_CASE("lab binary: bad parameters exit with code 2 and a message, nothing on stdout") {
    std::error_code ec;
    const auto lab = lab_binary();
    if (lab.empty()) return;
    const auto out = scratch_path("qlimits_lab_cli_test.out");
    for (const char* args :
         {"run veth-bql --bogus=1", "run veth-bql --ring=0", "run veth-bql --ring=x1", "run nope",
          "list extra", "pipeline --ring=1", "pipeline --bogus=1", "pipeline --work-ns=abc",
          "pipeline --policy=nosuch", "pipeline --json --repeat=1", "run veth-bql --json --no-svg",
          "run veth-bql --warmup-ms=5000", "run veth-bql --producer-ns=1 --base-cost-ns=0",
          "sweep veth-bql", "sweep veth-bql --ring=8..4", "sweep veth-bql --ring=8..64 --jitter=0..1",
          "sweep nope --ring=8,16", "calibrate extra",
          // each value in range, together too much: a 64 GiB payload pool; 17 min to drain
          "pipeline --item-bytes=65536 --ring=1048576", "pipeline --ring=1048576 --work-ns=1e6",
          // review 2026-12-03: runs the event budget did not see (a speed case's own cost,
          // probes), values that cannot run together, sweep options that did nothing
          "run veth-bql --producer-ns=1 --base-cost-ns=1000000 --nrules=0 --adversarial=0",
          "run veth-bql --nrules=13000 --speed-cases=0 --adversarial=0 --duration-ms=600000 "
          "--probe-interval-us=1",
          "run virtio-dim --msg-bytes=4096 --mss=4000 --window-bytes=2000",
          "sweep thread-ring --work-ns=100..200:3 --work-ns=5",
          "sweep thread-ring --work-ns=100..200:3 --csv x",
          // review 2026-12-03 (the real pipeline): duplicates ran twice and merged into one
          // round's median; --capture-policy alone did nothing; a file that cannot be written
          // failed (exit 1) after every run; a capture log too large for memory aborted
          "pipeline --pattern=flood,flood", "pipeline --fixed-limit=8,8",
          // (A path under a file: a missing directory is created since 2026-12-06, and this
          // suite may run as root, who could create /nonexistent-dir.)
          "pipeline --capture-policy=none", "pipeline --json /dev/null/dir/p.json",
          "pipeline --capture /dev/null/dir/p.capture",
          "pipeline --capture /dev/null/dir/p.capture --duration-ms=600000",
          // review 2026-12-06: a take's work (64 x 20 us) over 5 % of a 20 ms window, where
          // items counted at their takes miscount the window
          "pipeline --work-ns=20000 --duration-ms=20",
          // review 2026-12-05: a sweep's point count went through strtol alone
          "sweep veth-bql --ring=2..5:+3", "sweep veth-bql \"--ring=2..5: 3\"",
          "sweep veth-bql --ring=2..5:3x", "sweep veth-bql --ring=2..5:"}) {
        const std::string cmd = lab.string() + " " + args + " >" + out.string() + " 2>&1";
        const int status = std::system(cmd.c_str());
        INFO(args);
        REQUIRE(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 2);
        CHECK(std::filesystem::file_size(out) > 0); // the message went to stderr
    }
    std::filesystem::remove(out, ec);
}

/// The metrics object of the only run in a pipeline --json file (kept alive in `root`).
const jvalue* only_run_metrics(const std::filesystem::path& file, jvalue& root) {
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    jparser jp{text};
    REQUIRE(jp.value(root));
    REQUIRE(root.kind == jvalue::array);
    REQUIRE(root.items.size() == 1);
    const jvalue* metrics = root.items[0].at("metrics");
    REQUIRE(metrics != nullptr);
    return metrics;
}

TEST_CASE("lab binary: pipeline and sweep run, check themselves and exit 0") {
    std::error_code ec;
    const auto lab = lab_binary();
    if (lab.empty()) return;
    const auto dir = scratch_path("qlimits_lab_cli_run");
    std::filesystem::create_directories(dir, ec);
    const auto out = dir / "out.txt";
    auto run = [&](const std::string& args) { return run_lab(lab, out, args, 0); };
    CHECK(run("pipeline --help").find("--compare-sim") != std::string::npos);
    // A refused command leaves an existing output file as it was (a first version of the
    // writability check emptied it before the policy names were checked).
    {
        const auto keep = dir / "keep.json";
        std::ofstream(keep) << "[1]";
        (void)run_lab(lab, out, "pipeline --json " + keep.string() + " --policy=nosuch", 2);
        std::ifstream in(keep);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        CHECK(text == "[1]");
    }
    // A good --json beside a --capture that cannot be written: refused before either is made
    // (the json's new directory and an empty file were left behind before 2026-12-06).
    {
        const auto fresh = dir / "fresh_dir";
        std::filesystem::remove_all(fresh, ec);
        (void)run_lab(lab, out, "pipeline --repeat=1 --json " + (fresh / "p.json").string() +
                                    " --capture /dev/null/dir/p.capture", 2);
        CHECK_FALSE(std::filesystem::exists(fresh));
    }
    // Tiny real runs: two rows, one round; the checks (conservation, Little) must hold.
    const std::string p = run("pipeline --duration-ms=30 --warmup-ms=10 --repeat=1 "
                              "--policy=dql-batch --json " + (dir / "p.json").string());
    CHECK(p.find("dql-batch") != std::string::npos);
    CHECK(p.find("FAILED") == std::string::npos);
    CHECK(std::filesystem::file_size(dir / "p.json") > 0);
    // Sojourn and inflight are the time in the ring, stamped by the ring at the push and the
    // pop: never more items in it than its slots. Stamped around the channel's calls (before
    // 2026-12-03), an 8-slot ring showed 11 in flight.
    run("pipeline --duration-ms=60 --warmup-ms=10 --repeat=1 --policy=none --ring=8 --batch=8 "
        "--json " + (dir / "r8.json").string());
    {
        jvalue root;
        const jvalue* metrics = only_run_metrics(dir / "r8.json", root);
        REQUIRE(metrics->at("inflight_mean") != nullptr);
        CHECK(metrics->at("inflight_mean")->num > 0);
        CHECK(metrics->at("inflight_mean")->num <= 8.0 + 1e-9);
        CHECK(metrics->at("throughput_pps")->num > 0);
        // An item's wait goes on in the consumer's batch until its work starts (a review,
        // 2026-12-06: the time in the ring alone left it out): never shorter than the ring's.
        REQUIRE(metrics->at("to_work_p99_us") != nullptr);
        REQUIRE(metrics->at("sojourn_p99_us") != nullptr);
        CHECK(metrics->at("to_work_p99_us")->num >= metrics->at("sojourn_p99_us")->num);
        // The producer's real sleeps are reported beside its restarts (asleep or polling).
        REQUIRE(metrics->at("producer_sleeps_per_s") != nullptr);
        CHECK(metrics->at("producer_sleeps_per_s")->num >= 0);
    }
    // A paced producer's wait for its next item ends with the window (it ran 1 s for a 10 ms
    // window before), and a window without items reports no sojourn (null), not 0.
    run("pipeline --duration-ms=10 --warmup-ms=0 --repeat=1 --policy=none --pattern=paced "
        "--rate=1 --json " + (dir / "paced.json").string());
    {
        jvalue root;
        const jvalue* metrics = only_run_metrics(dir / "paced.json", root);
        CHECK(metrics->at("throughput_pps")->num == 0);
        CHECK(metrics->at("sojourn_p99_us")->kind == jvalue::null_v);
        const jvalue* ratio = metrics->at("throughput_x_none"); // none moved nothing: no ratio
        CHECK((ratio == nullptr || ratio->kind == jvalue::null_v));
    }
    // An open-loop producer's items are ready when due (paced) or released (bursts), so the
    // wait behind items held back counts in send_wait. Offered 1e9 items/s, or 2000 items at
    // once, a consumer that takes 20 us an item leaves items entering the ring tens of ms late
    // (mean ~25-50 ms); measured from when the producer got round to them (before 2026-12-05),
    // send_wait was about one item's wait, 20 us (a few ms on a loaded machine).
    for (const char* pattern : {"paced --rate=1e9", "bursts --burst=2000 --burst-gap-us=100000"}) {
        const auto file = dir / "open.json";
        run(std::string("pipeline --duration-ms=100 --warmup-ms=10 --repeat=1 --policy=none "
                        "--ring=8 --batch=8 --work-ns=20000 --pattern=") +
            pattern + " --json " + file.string());
        jvalue root;
        const jvalue* metrics = only_run_metrics(file, root);
        REQUIRE_MESSAGE(metrics->at("throughput_pps")->num > 0, pattern);
        REQUIRE(metrics->at("send_wait_mean_us") != nullptr);
        CHECK_MESSAGE(metrics->at("send_wait_mean_us")->num > 5000.0, pattern);
    }
    // The capture of a run reads back: `%g` wrote a threshold of 0.00001 as 1e-05, which the
    // capture format refuses (found by a review of the format).
    // The captured run is one more run, out of the table and its ratios (review 2026-12-06:
    // as round 1's `none` it slowed the base of every ratio), reported on a line of its own.
    const auto cap = dir / "p.capture";
    const std::string captured = run("pipeline --duration-ms=30 --warmup-ms=10 --repeat=1 "
                                     "--policy=none --sojourn-threshold-us=0.00001 --capture " +
                                     cap.string());
    CHECK(captured.find("capture " + cap.string() + ": one more none run with the capture on") !=
          std::string::npos);
    // A row of several --fixed-limit values is captured with its own value (review
    // 2026-12-06: fixed-64 replayed as `fixed` at the default 8), and whatif finds its row.
    {
        const auto cap64 = dir / "f64.capture";
        run("pipeline --duration-ms=30 --warmup-ms=10 --repeat=1 --policy=fixed "
            "--fixed-limit=8,64 --capture-policy=fixed-64 --capture " + cap64.string());
        std::ifstream in(cap64);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        CHECK(text.find("meta policy fixed\n") != std::string::npos);
        CHECK(text.find("param fixed-limit 64\n") != std::string::npos);
        const std::string w = run("whatif " + cap64.string() + " --policy=fixed --no-svg");
        CHECK(w.find("names no row") == std::string::npos);
        CHECK(w.find("fixed") != std::string::npos);
    }
    {
        std::ifstream in(cap);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        CHECK(text.find("param sojourn-threshold-us 0.00001\n") != std::string::npos);
        qlimits::capture_data d;
        const auto res = qlimits::read_capture(text, d);
        CHECK_MESSAGE(res.ok, res.line << ": " << res.reason);
    }
    const std::string sw = run("sweep thread-ring --pattern=flood --duration-ms=30 --warmup-ms=10 "
                               "--work-ns=100..900:3 --policy=none,dql --svg " + dir.string());
    for (const char* v : {" 100 ", " 500 ", " 900 "}) CHECK(sw.find(v) != std::string::npos);
    CHECK(std::filesystem::exists(dir / "sweep__thread-ring__work-ns__flood.svg"));
    // veth's speed and adversarial cases set their own rule count: not beside swept values.
    // (":0002": leading zeros of the point count are not its length; review 2026-12-05.)
    const std::string vs = run("sweep veth-bql --nrules=0..1000:0002 --policy=none --duration-ms=40 "
                               "--warmup-ms=10 --no-svg");
    CHECK(vs.find("nrules=1000") != std::string::npos);
    CHECK(vs.find("cost=") == std::string::npos);
    CHECK(vs.find("adversarial") == std::string::npos);
    std::filesystem::remove_all(dir, ec);
}

TEST_CASE("lab binary: whatif replays a capture, and refuses a bad one by line and reason") {
    std::error_code ec;
    const auto lab = lab_binary();
    if (lab.empty())
        return;
    const auto dir = scratch_path("qlimits_lab_cli_whatif");
    std::filesystem::create_directories(dir, ec);
    const auto out = dir / "out.txt";
    auto run = [&](const std::string& args, int want) { return run_lab(lab, out, args, want); };
    // 2000 items, one every 2 us, 500 ns of work each, taken and served at once.
    {
        std::ofstream f(dir / "ok.capture");
        f << "qlimits-capture v1\nmeta policy none\n";
        for (std::uint64_t k = 0; k < 2000; ++k) {
            const std::uint64_t t = 2000 * k;
            f << "i " << t << ' ' << t + 50 << ' ' << t + 80 << " 1\nc " << t + 100 << " 1\ns "
              << t + 100 << ' ' << t + 600 << " 1\n";
        }
        std::ofstream bad(dir / "bad.capture");
        bad << "qlimits-capture v1\ni 1 2 3 1\ni 1 1 1 1\n";
    }
    const std::string ok = dir.string() + "/ok.capture";
    const std::string text =
        run("whatif " + ok + " --policy=none,dql-batch,fixed --svg " + dir.string(), 0);
    for (const char* row : {"captured", "none", "dql-batch", "fixed"})
        CHECK(text.find(row) != std::string::npos);
    CHECK(text.find("FAILED") == std::string::npos);
    CHECK(std::filesystem::exists(dir / "whatif__ok_capture_closed.svg"));
    // Without 'meta ring' / 'meta batch' the defaults are replayed, and whatif says so (a
    // review: a 1024-slot ring replayed as 256 without a word); given, no note.
    CHECK(text.find("no 'meta ring' line and no --ring") != std::string::npos);
    CHECK(text.find("no 'meta batch' line and no --batch") != std::string::npos);
    CHECK(run("whatif " + ok + " --policy=none --no-svg --ring=8 --batch=8", 0).find("note:") ==
          std::string::npos);
    CHECK(run("whatif " + dir.string() + "/bad.capture", 2)
              .find("bad.capture:3: item entered before") != std::string::npos);
    for (const std::string& args : std::vector<std::string>{
             "whatif", "whatif " + dir.string() + "/none.capture",
             "whatif " + ok + " --source=sideways", "whatif " + ok + " --overhead=x",
             "whatif " + ok + " --policy=nosuch", "whatif " + ok + " --ring=0",
             "pipeline --capture", "pipeline --pattern=flood,paced --capture " + ok,
             "pipeline --policy=dql-item --capture-policy=sw-item --capture " + ok,
             "whatif " + ok + " -v", "whatif " + ok + " --policy none", "pipeline --policy none",
             // review 2026-12-05: a second option or parameter replaced the first (run and
             // sweep refuse it); an empty --json= took the next argument as its file; a
             // directory read as an empty capture; demo ignored what it was given
             "whatif " + ok + " --policy=none --policy=fixed", "whatif " + ok + " --ring=8 --ring=16",
             "whatif " + ok + " --source=open --source=closed",
             "whatif " + ok + " --svg=" + dir.string() + " --no-svg",
             // review 2026-12-06: accepted, listed, and it changed nothing
             "whatif " + ok + " --work-scale=2",
             "pipeline --policy=none --policy=fixed", "pipeline --work-ns=100 --work-ns=0",
             "pipeline --json= " + dir.string() + "/p.json", "demo extra"})
        run(args, 2);
    CHECK(run("whatif " + dir.string(), 2).find("a directory") != std::string::npos);
    // review 2026-12-06: a capture without log.wanted() caps every replay at the capture's pace,
    // and the captured policy's replay far from the capture; each said on stderr.
    {
        std::ofstream f(dir / "unmarked.capture");
        f << "qlimits-capture v1\nmeta policy none\nmeta ring 256\nmeta batch 64\n";
        for (std::uint64_t k = 0; k < 2000; ++k) {
            const std::uint64_t t = 2000 * k;
            f << "i " << t << ' ' << t << ' ' << t << " 1\nc " << t + 100 << " 1\ns " << t + 100
              << ' ' << t + 600 << " 1\n";
        }
    }
    CHECK(run("whatif " + dir.string() + "/unmarked.capture --policy=none --no-svg", 0)
              .find("did not call log.wanted()") != std::string::npos);
    CHECK(run("whatif " + ok + " --policy=none --no-svg --ring=8 --batch=8", 0)
              .find("log.wanted()") == std::string::npos);
    // --list shows what a replay takes: not the synthetic producer's shape nor its work, and
    // the run's length as the capture's (it listed thread-ring's 2000 ms and --pattern).
    const std::string list = run("whatif --list", 0);
    for (const char* gone : {"--pattern=", "--rate=", "--burst=", "--burst-gap-us=", "--work-ns=",
                             "--work-scale=", "--duration-ms=2000"})
        CHECK_MESSAGE(list.find(gone) == std::string::npos, gone);
    CHECK(list.find("--duration-ms=(the capture's span") != std::string::npos);
    // A capture whose first items have no units (control messages): no completion times them.
    // whatif read the completion before the first one (a crash, or garbage in Release).
    for (const char* name : {"zero_first.capture", "zero_only.capture"}) {
        std::ofstream f(dir / name);
        const bool only = std::string_view{name} == "zero_only.capture";
        f << "qlimits-capture v1\ni 0 0 100 0\ni 1000 1000 1100 " << (only ? 0 : 1)
          << "\ni 2000 2000 2100 " << (only ? 0 : 1) << '\n';
        if (!only) f << "c 1500 1\nc 2500 1\n";
        f << "s 0 100 1\ns 1000 1100 1\ns 2000 2100 1\n";
    }
    CHECK(run("whatif " + dir.string() + "/zero_first.capture --policy=none --no-svg", 0)
              .find("captured") != std::string::npos);
    run("whatif " + dir.string() + "/zero_only.capture --policy=none --no-svg", 0);
    std::filesystem::remove_all(dir, ec);
}

TEST_CASE("lab binary: whatif on items of many units neither aborts nor wraps the books") {
    // Found by a review of the capture format: items of 2^25 units through the twin's 256-slot
    // ring put 2^33 units "in flight" (a policy's 32-bit count wrapped: an over-completion
    // abort, exit 134, or a failed conservation check); items above 2^28 - 1 (the policies'
    // max_object, which the format allows) were pushed though the policy refused them. Now the
    // twin holds the producer at 2^31 - 1 units in flight, as channel's books do, and whatif
    // refuses an item no policy accepts.
    std::error_code ec;
    const auto lab = lab_binary();
    if (lab.empty())
        return;
    const auto dir = scratch_path("qlimits_lab_cli_big_units");
    std::filesystem::create_directories(dir, ec);
    const auto out = dir / "out.txt";
    // 400 items posted 100 ns apart and served 10 us each: the ring fills.
    const auto write = [&](const std::string& name, std::uint64_t units) {
        std::ofstream f(dir / name);
        f << "qlimits-capture v1\n";
        for (std::uint64_t k = 0; k < 400; ++k)
            f << "i " << 100 * k << ' ' << 100 * k << ' ' << 100 * k + 10 << ' ' << units << '\n';
        for (std::uint64_t k = 0; k < 400; ++k)
            f << "c " << 40000 + 10000 * k << ' ' << units << '\n';
        f << "s 0 4000000 400\n";
    };
    write("big.capture", std::uint64_t{1} << 25);
    write("too_big.capture", std::uint64_t{1} << 28);
    const std::string text = run_lab(lab, out, "whatif " + (dir / "big.capture").string() +
                                                   " --policy=none,sw-batch",
                                     0);
    CHECK(text.find("FAILED") == std::string::npos);
    CHECK(run_lab(lab, out, "whatif " + (dir / "too_big.capture").string(), 2)
              .find("above the policies' largest item") != std::string::npos);
    std::filesystem::remove_all(dir, ec);
}

TEST_CASE("lab binary: replay says when it cannot read the trace or write the replay") {
    const auto lab = lab_binary();
    if (lab.empty()) return;
    const auto status_of = [&lab](const std::string& redirections) {
        const std::string cmd = lab.string() + " replay dql " + redirections + " 2>/dev/null";
        const int status = std::system(cmd.c_str());
        REQUIRE(WIFEXITED(status));
        return WEXITSTATUS(status);
    };
    // Before: a directory on stdin read as an empty trace and exited 0.
    CHECK(status_of("< /") == 2);
    CHECK(status_of("< /dev/null >/dev/null") == 0); // an empty trace is a valid one
    if (std::filesystem::exists("/dev/full")) CHECK(status_of("< /dev/null >/dev/full") == 0);
    const auto trace = scratch_path("qlimits_lab_cli_replay.trace");
    {
        std::ofstream f(trace);
        f << "q 10\nc 1\n";
    }
    CHECK(status_of("< " + trace.string() + " >/dev/null") == 0);
    if (std::filesystem::exists("/dev/full"))
        CHECK(status_of("< " + trace.string() + " >/dev/full") == 1); // before: exit 0
    std::error_code ec;
    std::filesystem::remove(trace, ec);
}

TEST_CASE("lab --json: one object per run with scenario, policy, params and metrics") {
    static const std::vector<scenario> all = all_scenarios();
    std::vector<const scenario*> scs;
    std::vector<param_lists> user;
    // Short runs, one case per scenario.
    const std::map<std::string, param_lists> own{{"virtio-bql", {{"queues", {1}}}},
                                                 {"veth-bql", {{"nrules", {5000}}}},
                                                 {"thread-ring", {{"pattern", {0}}}},
                                                 {"virtio-dim", {{"msg-bytes", {1400}}}}};
    for (const auto& s : all) {
        scs.push_back(&s);
        param_lists l = own.at(s.name);
        l["duration-ms"] = {200};
        l["warmup-ms"] = {50};
        user.push_back(l);
    }
    const auto jobs = plan(scs, user, {});
    const auto results = execute(jobs, 2, {});
    const std::string text = json(results);
    jvalue root;
    jparser p{text};
    REQUIRE(p.value(root));
    p.ws();
    CHECK(p.i == text.size());
    REQUIRE(root.kind == jvalue::array);
    CHECK(root.items.size() == results.size());
    for (const auto& run : root.items) {
        REQUIRE(run.kind == jvalue::object);
        for (const char* k : {"scenario", "policy"}) {
            REQUIRE(run.at(k) != nullptr);
            CHECK(run.at(k)->kind == jvalue::string);
        }
        const jvalue* params = run.at("params");
        const jvalue* metrics = run.at("metrics");
        REQUIRE(params != nullptr);
        REQUIRE(metrics != nullptr);
        CHECK(params->at("seed") != nullptr);
        for (const auto& name : standard_metrics()) {
            INFO(run.at("scenario")->str << " " << run.at("policy")->str << " " << name);
            const jvalue* m = metrics->at(name);
            REQUIRE(m != nullptr);
            CHECK((m->kind == jvalue::number || m->kind == jvalue::null_v));
        }
        const bool virtio = run.at("scenario")->str == "virtio-bql";
        CHECK((metrics->at("rr_tps")->kind == jvalue::number) == virtio);
        // A limit policy has a limit; virtio-dim's moderation policies have none.
        const bool has_limit =
            run.at("policy")->str != "none" && run.at("scenario")->str != "virtio-dim";
        CHECK((metrics->at("limit_mean")->kind == jvalue::null_v) == !has_limit);
        CHECK(metrics->at("throughput_pps")->num > 0);
    }
}

TEST_CASE("lab: a sweep leaves out cases that do not use the swept value; --json names them") {
    // Review 2026-12-03: a sweep of --nrules printed veth's speed and adversarial cases (which
    // set their own cost and rule count) beside every value, with the same run each time; and
    // the JSON of those cases did not say what made them differ.
    static const std::vector<scenario> all = all_scenarios();
    const scenario* veth = nullptr;
    for (const auto& s : all)
        if (s.name == "veth-bql") veth = &s;
    REQUIRE(veth != nullptr);
    REQUIRE(veth->case_ignores);
    run_options o;
    REQUIRE_FALSE(parse({"veth-bql", "--policy=none", "--duration-ms=40", "--warmup-ms=10"}, o));
    const auto jobs = plan(o.scenarios, o.params, o.policies);
    int speed = 0, adversarial = 0;
    for (const auto& j : jobs) {
        if (j.params.contains("speed-case")) {
            ++speed;
            CHECK(veth->case_ignores(j.params, "nrules"));
            CHECK(veth->case_ignores(j.params, "base-cost-ns"));
            CHECK_FALSE(veth->case_ignores(j.params, "producer-ns"));
            const run_result r = execute_one(j);
            bool named = false;
            for (const auto& [k, v] : r.params) named = named || k == "speed-case";
            CHECK(named);
        } else if (j.params.contains("adversarial-case")) {
            ++adversarial;
            CHECK(veth->case_ignores(j.params, "nrules"));
        } else {
            CHECK_FALSE(veth->case_ignores(j.params, "nrules"));
        }
        // Only the adversarial case has cheap bursts (review 2026-12-05).
        const bool adv = j.params.contains("adversarial-case");
        for (const char* name : {"adv-nrules", "cheap-ns", "burst-pkts", "burst-period-us"}) {
            CAPTURE(name);
            CHECK(veth->case_ignores(j.params, name) == !adv);
        }
    }
    CHECK(speed == 2);
    CHECK(adversarial == 1);
    // thread-ring: each pattern reads its own shape (review 2026-12-05: a sweep of
    // --burst-gap-us printed the flood's one run beside every value).
    run_options t;
    REQUIRE_FALSE(parse({"thread-ring", "--policy=none"}, t));
    REQUIRE(t.scenarios.size() == 1);
    const scenario* tr = t.scenarios.front();
    REQUIRE(tr->case_ignores);
    int patterns = 0;
    for (const auto& j : plan(t.scenarios, t.params, t.policies)) {
        ++patterns;
        const double pattern = j.params.at("pattern");
        CAPTURE(pattern);
        CHECK(tr->case_ignores(j.params, "burst") == (pattern != 1));
        CHECK(tr->case_ignores(j.params, "burst-gap-us") == (pattern != 1));
        CHECK(tr->case_ignores(j.params, "rate") == (pattern != 2));
        CHECK_FALSE(tr->case_ignores(j.params, "work-ns"));
    }
    CHECK(patterns == 3);
}

TEST_CASE("lab binary: a sweep whose every case ignores the swept value says so") {
    // Review 2026-12-05: veth-bql's cases all set --speed-cases themselves, so a sweep of it
    // left every run out and said "no policy matches".
    std::error_code ec;
    const auto lab = lab_binary();
    if (lab.empty()) return;
    const auto out = scratch_path("qlimits_lab_cli_sweep_ignored.out");
    CHECK(run_lab(lab, out, "sweep veth-bql --speed-cases=0.5..2:4 --policy=none", 2)
              .find("no case uses --speed-cases") != std::string::npos);
    CHECK(run_lab(lab, out, "sweep thread-ring --pattern=flood --burst-gap-us=10..1000:3 "
                            "--policy=none",
                  2)
              .find("no case uses --burst-gap-us") != std::string::npos);
    // A range over a named parameter swept the names' indices, shown as 0 and 1 (review
    // 2026-12-06); the names go in a list.
    CHECK(run_lab(lab, out, "sweep virtio-bql --qdisc=fq..fifo --queues=1 --policy=none", 2)
              .find("--qdisc takes names, not a range") != std::string::npos);
    std::filesystem::remove(out, ec);
}

TEST_CASE("lab binary: outputs that would overwrite an input or each other, and a lost stdout") {
    // Review 2026-12-05: `whatif CAP --json CAP` overwrote the capture; `pipeline --json F
    // --capture F` kept only the JSON; run, whatif, list and demo exited 0 with stdout on a full
    // disk (replay alone checked it).
    std::error_code ec;
    const auto lab = lab_binary();
    if (lab.empty()) return;
    const auto dir = scratch_path("qlimits_lab_cli_outputs");
    std::filesystem::create_directories(dir, ec);
    const auto out = dir / "out.txt";
    const auto cap = dir / "victim.capture";
    std::string capture = "qlimits-capture v1\nmeta ring 64\nmeta batch 16\n";
    for (std::uint64_t k = 0; k < 200; ++k) {
        const std::uint64_t t = 2000 * k;
        capture += "i " + std::to_string(t) + " " + std::to_string(t + 50) + " " +
                   std::to_string(t + 80) + " 1\nc " + std::to_string(t + 100) + " 1\ns " +
                   std::to_string(t + 100) + " " + std::to_string(t + 600) + " 1\n";
    }
    std::ofstream(cap) << capture;
    const std::string c = cap.string();
    CHECK(run_lab(lab, out, "whatif " + c + " --policy=none --no-svg --json " + c, 2)
              .find("is the capture itself") != std::string::npos);
    CHECK(run_lab(lab, out, "whatif " + c + " --policy=none --no-svg --json " + dir.string() +
                                "/./victim.capture", 2)
              .find("is the capture itself") != std::string::npos);
    {
        std::ifstream in(cap);
        const std::string kept((std::istreambuf_iterator<char>(in)), {});
        CHECK(kept == capture);
    }
    const std::string both = (dir / "both.out").string();
    CHECK(run_lab(lab, out, "pipeline --policy=none --repeat=1 --json " + both + " --capture " + both,
                  2)
              .find("name one file") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(both)); // refused before the probe that creates files
    // An output named twice within one command (review 2026-12-06: `run --json DIR/index.html
    // --svg DIR` kept the HTML index and lost the JSON, exit 0): the second write is refused,
    // naming the first, which is kept whole; the command exits 1.
    {
        const std::string quick = "run thread-ring --policy=none --pattern=flood --duration-ms=20 "
                                  "--warmup-ms=0 ";
        const auto plots = dir / "plots";
        const std::string said =
            run_lab(lab, out, quick + "--json " + (plots / "index.html").string() + " --svg " +
                                  plots.string(), 1);
        CHECK(said.find("another output of this command") != std::string::npos);
        std::ifstream in(plots / "index.html");
        const std::string kept((std::istreambuf_iterator<char>(in)), {});
        CHECK(kept.rfind("[", 0) == 0); // the JSON, written first
        const auto csvs = dir / "csvs";
        CHECK(run_lab(lab, out, quick + "--no-svg --json " + (csvs / "./summary.csv").string() +
                                    " --csv " + csvs.string(), 1)
                  .find("another output of this command") != std::string::npos);
        // Distinct files in one directory are fine.
        run_lab(lab, out, quick + "--json " + (plots / "r.json").string() + " --svg " +
                              plots.string(), 0);
    }
    // The capture's `meta policy` reaches the terminal quoted, as the reader quotes a bad
    // field (review 2026-12-06: an escape sequence was printed raw, a long name whole).
    {
        const auto odd = dir / "odd_policy.capture";
        std::string text = capture;
        text.insert(text.find('\n') + 1,
                    "meta policy \x1b[31mRED\x1b[0m" + std::string(300, 'p') + "\n");
        std::ofstream(odd) << text;
        const std::string w =
            run_lab(lab, out, "whatif " + odd.string() + " --policy=none --no-svg", 0);
        CHECK(w.find('\x1b') == std::string::npos);
        CHECK(w.find("under '\\x1b[31mRED\\x1b[0mppp") != std::string::npos);
        CHECK(w.find("'meta policy' '\\x1b[31mRED") != std::string::npos);
        CHECK(w.find(std::string(40, 'p')) == std::string::npos); // at most 32 bytes shown
    }
    // The empty window of the captured row is explained (the capture spans 0.4 ms).
    CHECK(run_lab(lab, out, "whatif " + c + " --policy=none --no-svg --duration-ms=200", 0)
              .find("a shorter --warmup-ms measures it") != std::string::npos);
    {
        std::string no_c;
        std::istringstream lines(capture);
        for (std::string l; std::getline(lines, l);)
            if (l.rfind("c ", 0) != 0) no_c += l + "\n";
        std::ofstream(dir / "no_c.capture") << no_c;
    }
    CHECK(run_lab(lab, out, "whatif " + (dir / "no_c.capture").string() + " --policy=none --no-svg",
                  0)
              .find("no completion ('c') records") != std::string::npos);
    if (std::filesystem::exists("/dev/full")) {
        const auto status_of = [&lab](const std::string& args) {
            const std::string cmd = lab.string() + " " + args + " >/dev/full 2>/dev/null";
            const int status = std::system(cmd.c_str());
            REQUIRE(WIFEXITED(status));
            return WEXITSTATUS(status);
        };
        CHECK(status_of("list") == 1);
        CHECK(status_of("demo") == 1);
        CHECK(status_of("whatif " + c + " --policy=none --no-svg") == 1);
        CHECK(status_of("run thread-ring --policy=none --pattern=flood --duration-ms=20 "
                        "--warmup-ms=0 --no-svg") == 1);
        CHECK(status_of("replay dql < /dev/null") == 0); // nothing to write: nothing lost
    }
    std::filesystem::remove_all(dir, ec);
}

TEST_CASE("lab veth-bql: speed cases that print alike under %g get labels of their own") {
    // Review 2026-12-05: --speed-cases=1,1.0000001 labelled both "cost=1x producer", so one
    // run's CSV overwrote the other's.
    CHECK(veth::case_label({{"speed-case", 1.0}, {"nrules", 0}}) == "cost=1x producer");
    CHECK(veth::case_label({{"speed-case", 0.5}, {"nrules", 0}}) == "cost=0.5x producer");
    CHECK(veth::case_label({{"speed-case", 1.0000001}, {"nrules", 0}}) == "cost=1.0000001x producer");
}

TEST_CASE("lab run: a parameter that counts bytes in one scenario and items in another is "
          "refused for both") {
    // Review 2026-12-05: `run all --fixed-limit=8` gave virtio-bql (bytes) a limit of 8 bytes,
    // less than one buffer, beside 8 packets in veth-bql.
    const std::string e = error_of({"all", "--fixed-limit=8"});
    CHECK(e.find("--fixed-limit counts different things") != std::string::npos);
    CHECK(e.find("bytes in virtio-bql") != std::string::npos);
    CHECK(error_of({"virtio-bql", "--fixed-limit=65536"}).empty());
    CHECK(error_of({"veth-bql", "--fixed-limit=8"}).empty());
    CHECK(error_of({"all", "--ring=128"}).empty()); // slots everywhere
}

TEST_CASE("lab binary: every command's --json into a missing directory creates it") {
    // `run` created a missing parent directory; `sweep`, `whatif` and `pipeline` did not (they
    // exited 1 with "cannot write") until 2026-12-06 (bench/lab/output.hpp).
    std::error_code ec;
    const auto lab = lab_binary();
    if (lab.empty()) return;
    const auto dir = scratch_path("qlimits_lab_cli_parents");
    std::filesystem::remove_all(dir, ec);
    std::filesystem::create_directories(dir, ec);
    const auto out = dir / "out.txt";
    const auto cap = dir / "tiny.capture";
    {
        std::ofstream f(cap);
        f << "qlimits-capture v1\nmeta policy none\n";
        for (std::uint64_t k = 0; k < 500; ++k) {
            const std::uint64_t t = 2000 * k;
            f << "i " << t << ' ' << t + 50 << ' ' << t + 80 << " 1\nc " << t + 100 << " 1\ns "
              << t + 100 << ' ' << t + 600 << " 1\n";
        }
    }
    const std::pair<const char*, std::string> commands[] = {
        {"run", "run thread-ring --pattern=flood --policy=none --duration-ms=20 --warmup-ms=5 "
                "--no-svg"},
        {"sweep", "sweep thread-ring --pattern=flood --work-ns=100,200 --policy=none "
                  "--duration-ms=20 --warmup-ms=5 --no-svg"},
        {"whatif", "whatif " + cap.string() + " --policy=none --no-svg"},
        {"pipeline", "pipeline --duration-ms=10 --warmup-ms=0 --repeat=1 --policy=none"},
    };
    for (const auto& command : commands) {
        // (Not a structured binding: clang 14 cannot capture one in CHECK_MESSAGE's lambda.)
        const std::string name = command.first;
        const auto file = dir / name / "deeper" / "out.json";
        (void)run_lab(lab, out, command.second + " --json " + file.string(), 0);
        CHECK_MESSAGE(std::filesystem::file_size(file, ec) > 0, name);
    }
    // An --svg directory is created too (it was before; now through write_output's parents).
    (void)run_lab(lab, out, "whatif " + cap.string() + " --policy=none --svg " +
                                (dir / "svg" / "deeper").string(), 0);
    CHECK(std::filesystem::exists(dir / "svg" / "deeper", ec));
    std::filesystem::remove_all(dir, ec);
}

TEST_CASE("lab binary: a swept range ends on its upper bound exactly") {
    // A lab fuzz (2026-12-06): --jitter=0.3..0.9:2 swept 0.9000000000000001 (lo + (hi - lo)
    // misses hi by a unit in the last place), a value `run` refuses as out of [0, 0.9].
    std::error_code ec;
    const auto lab = lab_binary();
    if (lab.empty()) return;
    const auto dir = scratch_path("qlimits_lab_cli_sweep_end");
    std::filesystem::create_directories(dir, ec);
    const auto file = dir / "sweep.json";
    (void)run_lab(lab, dir / "out.txt",
                  "sweep thread-ring --jitter=0.3..0.9:2 --pattern=flood --duration-ms=10 "
                  "--warmup-ms=0 --policy=none --no-svg --json " + file.string(), 0);
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    jvalue root;
    jparser jp{text};
    REQUIRE(jp.value(root));
    REQUIRE(root.kind == jvalue::array);
    std::vector<double> swept;
    for (const auto& r : root.items) {
        const jvalue* params = r.at("params");
        REQUIRE(params != nullptr);
        REQUIRE(params->at("jitter") != nullptr);
        swept.push_back(params->at("jitter")->num);
    }
    REQUIRE(swept.size() == 2);
    CHECK(swept[0] == 0.3);
    CHECK(swept[1] == 0.9);
    std::filesystem::remove_all(dir, ec);
}

TEST_CASE("lab binary: whatif ends, or refuses, on captures that broke it (a fuzz, 2026-12-06)") {
    std::error_code ec;
    const auto lab = lab_binary();
    if (lab.empty()) return;
    const auto dir = scratch_path("qlimits_lab_cli_whatif_fuzz");
    std::filesystem::create_directories(dir, ec);
    const auto out = dir / "out.txt";
    const auto write = [&](const char* name, const std::string& text) {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    };
    // No think, no send time, services of no time: a closed-loop replay stayed at t = 0 for
    // ever (killed at 65 s). Each item now takes at least 1 ns.
    const auto still = write("still.capture", "qlimits-capture v1\ni 0 0 0 1\ni 0 0 0 1\n"
                                              "i 0 1 1 1\ns 1 1 1\ns 1 1 2\nc 1 3\n");
    const std::string w = run_lab(lab, out, "whatif " + still +
                                  " --source=closed --no-svg --policy=none --spin-ns=2000", 0);
    CHECK(w.find("none") != std::string::npos);
    // A consumer gap of 1.8e19 ns wrapped the engine's sums: 12 M items/s from a consumer
    // that costs 1.8e19 ns an item. Refused now, as the other times over 1e15 ns are.
    const auto wrap = write("wrap.capture", "qlimits-capture v1\ni 0 0 0 1\ni 0 1 1 1\ns 1 1 1\n"
                                            "s 18000000000000000000 18000000000000000000 1\n"
                                            "c 1 2\n");
    CHECK(run_lab(lab, out, "whatif " + wrap + " --no-svg --policy=none", 2).find("1e15") !=
          std::string::npos);
    // 100 s at a sample every 10 us: 10^7 samples a replay (933 MB for one policy). Refused
    // as `run` refuses it.
    const auto many = write("many.capture", "qlimits-capture v1\nparam sample-us 10\ni 0 0 0 1\n"
                                            "i 100000000000 100000000000 100000000000 1\n"
                                            "s 100000000000 100000000500 2\nc 100000000500 2\n");
    CHECK(run_lab(lab, out, "whatif " + many + " --no-svg --policy=none", 2)
              .find("time-series samples") != std::string::npos);
    std::filesystem::remove_all(dir, ec);
}
