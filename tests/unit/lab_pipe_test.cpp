// The real pipeline's own bookkeeping (bench/lab/pipe): the parts that are arithmetic, not
// timing. Nothing here asserts how long anything took.
#include <doctest/doctest.h>

#include "../../bench/lab/pipe/pacing.hpp"

using lab::pipe::pacing_timer;

TEST_CASE("pipeline pacing: only waits inside the window count, spins as given") {
    // Review 2026-12-06: the producer's pacing was timed by the wall clock only; long waits are
    // now timed by its CPU clock, and the books must not count what falls outside the window.
    pacing_timer p;
    CHECK(p.total() == 0);
    p.begin(false); // before the window: nothing counts
    p.end(false);
    CHECK(p.total() == 0);
    p.add_spin(250); // a short wait, spun on the wall clock
    CHECK(p.total() == 250);
    p.end(true); // an end without a begin counts nothing
    CHECK(p.total() == 250);
    p.begin(true); // a long wait in the window: its CPU (at least a clock read's) counts
    p.end(true);
    const auto once = p.total();
    CHECK(once > 250);
    p.end(true); // counted once
    CHECK(p.total() == once);
}
