#include <exception>
#include <new>

#include "actors/messages.hpp"

namespace troupe::actors {

failure current_failure() {
  try {
    throw;
  } catch (const kernels::device_error& e) {
    return {e.kind(), e.what()};
  } catch (const std::bad_alloc&) {
    return {failure_kind::device_failure, "out of memory"};
  } catch (const Exception& e) {
    return {failure_kind::bad_input, e.what()};
  } catch (const std::exception& e) {
    return {failure_kind::device_failure, e.what()};
  } catch (...) {
    return {failure_kind::device_failure, "unknown error while running the model"};
  }
}

} // namespace troupe::actors
