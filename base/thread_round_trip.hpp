#pragma once
/// What handing work to a sleeping thread and waiting for the answer costs on this machine: the
/// floor under any hand-over between actors (on virtual machines a wake-up can cost more than a
/// small op). troupe_overhead prints it beside the engine's fixed cost; HETERO's calibration
/// adds half of it to every crossing.

namespace troupe {

/// Median microseconds of `runs` round trips to a sleeping thread and back (mutex + condition
/// variable).
double thread_round_trip_us(int runs);

} // namespace troupe
