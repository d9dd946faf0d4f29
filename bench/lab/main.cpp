// qlimits-lab: the policy lab's command line. See README.md and docs/lab.md.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "commands.hpp"

namespace {
struct command {
    const char* name;
    int (*run)(int, char**);
    const char* help;
};
constexpr command commands[] = {
    {"list", lab::list_main, "list the scenarios, their policies and every parameter with its source"},
    {"run", lab::run_main,
     "run SCENARIO|all [--param=value ...] [--policy=a,b] [--json FILE] [--csv DIR] [--svg DIR]"},
    {"sweep", lab::sweep_main,
     "SCENARIO --PARAM=a..b[:n] | --PARAM=a,b,c [...]: each policy across one parameter "
     "(a line per value, an SVG curve)"},
    {"pipeline", lab::pipeline_main,
     "[--param=value ...] [--policy=a,b] [--json FILE] [--compare-sim]: two real threads "
     "through qlimits::channel (--help)"},
    {"whatif", lab::whatif_main,
     "CAPTURE [--policy=a,b] [--source=closed|open]: a captured workload (qlimits/capture/)\n"
     "           replayed through the thread-ring twin under each policy (--help)"},
    {"calibrate", lab::calibrate_main, "measure this machine; print thread-ring's parameters"},
    {"demo", lab::demo_main, "replay the bundled example trace through dql; print the limit"},
    {"replay", lab::replay_main,
     "replay POLICY [-v] < trace: state after each directive (POLICY: dql, fixed, unlimited, sw,\n"
     "           dim, vegas, gradient2, aimd; the peers tick in us)"},
};

// A command's exit code, made a failure when what it printed did not all reach stdout (a full
// disk, a closed pipe): the table would be lost with exit 0 (review 2026-12-05; replay checked
// this itself). std::cout is synchronized with stdio, so its writes go through stdout too.
// A command that failed already said why (replay reports this very failure itself).
int stdout_written(int rc) {
    errno = 0; // the reason of a failed flush; an earlier failure leaves none to report
    const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout;
    if (!failed || rc != lab::exit_ok) return rc;
    const int err = errno;
    std::fprintf(stderr, "qlimits-lab: cannot write to stdout%s%s\n", err != 0 ? ": " : "",
                 err != 0 ? std::strerror(err) : "");
    return lab::exit_failure;
}

void usage(std::FILE* to) {
    std::fprintf(to, "usage: qlimits-lab COMMAND [ARGS]\n\ncommands:\n");
    for (const command& c : commands) std::fprintf(to, "  %-10s %s\n", c.name, c.help);
}
} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        usage(stdout);
        return stdout_written(lab::exit_ok);
    }
    if (std::strcmp(argv[1], "help") == 0 || std::strcmp(argv[1], "--help") == 0 ||
        std::strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return stdout_written(lab::exit_ok);
    }
    for (const command& c : commands)
        if (std::strcmp(argv[1], c.name) == 0) return stdout_written(c.run(argc - 1, argv + 1));
    std::fprintf(stderr, "qlimits-lab: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return lab::exit_usage;
}
