/*
 * fake_clock.h — the test binary's clock_gettime, through the linker's
 * --wrap (tests/build.mk), the runtime's reads included: the real clock
 * unless a test freezes it, so that a heuristic the runtime bases on time
 * (a turn that has lasted LONG_TURN_US, a hub's cost per message) is
 * decided by the test, not by how loaded the machine is.
 *
 * While frozen, anything that waits for CLOCK_MONOTONIC to move never
 * ends: spin_us, and give-ups timed with it. Wait with nanosleep (the
 * kernel's clock, which is not wrapped), as wait_for does.
 */
#ifndef TESTS_RUNTIME_FAKE_CLOCK_H
#define TESTS_RUNTIME_FAKE_CLOCK_H

#include <stdint.h>

/* From now on CLOCK_MONOTONIC reads `ns` (not 0), on every thread, until
 * clock_thaw; the other clocks stay real. */
void clock_freeze(uint64_t ns);
/* CLOCK_MONOTONIC is the real one again (a jump forward, for a frozen
 * clock that was behind it). */
void clock_thaw(void);

#endif
