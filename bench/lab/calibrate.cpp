// qlimits-lab calibrate: measure this machine and print the thread-ring parameters it gives
// (pipe/calibrate.hpp says how each is measured).
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "pipe/busy_work.hpp"
#include "pipe/calibrate.hpp"

namespace lab {

int calibrate_main(int argc, char** argv) {
    if (argc > 1) {
        const bool help = std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0;
        std::fprintf(help ? stdout : stderr,
                     "usage: qlimits-lab calibrate\n  measures futex wake latency and cost, the "
                     "channel's sleep barrier, per-item ring costs and the busy loop's accuracy "
                     "(about 1 s), and prints them as thread-ring parameters\n");
        return help ? exit_ok : exit_usage;
    }
    const pipe::busy_work work;
    const pipe::machine m = pipe::measure_machine(work);
    std::printf("thread-ring parameters measured on this machine (pass them to 'qlimits-lab run "
                "thread-ring'):\n%s",
                pipe::describe(m).c_str());
    std::printf("\nbusy loop: %.4g iterations per ns\n", work.iterations_per_ns());
    return exit_ok;
}

} // namespace lab
