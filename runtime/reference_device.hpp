#pragma once
/// "REFERENCE": the reference kernels as a device of their own, op by op through
/// kernels::reference::interpreter (shapes that depend on run-time values are computed per
/// run). Slow and obviously correct; compile_model accepts it (for checking other devices),
/// available_devices does not list it.
#include <memory>

#include "kernels/device.hpp"

namespace troupe {

std::unique_ptr<kernels::device> make_reference_device();

} // namespace troupe
