// qlimits-lab: the subcommands. Each lives in its own file; main.cpp only dispatches.
#pragma once

namespace lab {
/// Exit codes shared by every subcommand.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1; // a run's own checks failed, or its output was not written
inline constexpr int exit_usage = 2;   // bad arguments or malformed input

int replay_main(int argc, char** argv); // replay POLICY [-v] < trace
int demo_main(int argc, char** argv);   // replay the bundled example trace through dql
int list_main(int argc, char** argv);   // list scenarios, policies and parameters
int run_main(int argc, char** argv);    // run SCENARIO|all through the simulator
int pipeline_main(int argc, char** argv); // two real threads through qlimits::channel
int calibrate_main(int argc, char** argv); // measure this machine for thread-ring
int sweep_main(int argc, char** argv);     // one parameter over a range: a line per value
int whatif_main(int argc, char** argv);    // a captured workload under every policy
} // namespace lab

/// The bundled example trace (bench/lab/traces/example.trace), embedded at build time.
extern const char* const qlimits_lab_example_trace;
