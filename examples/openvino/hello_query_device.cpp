// OpenVINO's hello_query_device on troupe: every device, every property it lists
// (ov::supported_properties), whether it is writable, and its value.
//   hello_query_device
#include <troupe/openvino.hpp>

#include <exception>
#include <iostream>
#include <string>

int main() {
  try {
    std::cout << ov::get_openvino_version() << "\n";
    ov::Core core;
    std::cout << "Available devices:\n";
    for (auto&& device : core.get_available_devices()) {
      std::cout << device << "\n";
      std::cout << "\tSUPPORTED_PROPERTIES:\n";
      for (auto&& property : core.get_property(device, ov::supported_properties)) {
        if (property == ov::supported_properties.name()) continue;
        const std::string value = core.get_property(device, property).as<std::string>();
        std::cout << "\t\t" << property << " (" << (property.is_mutable() ? "RW" : "RO") << ") : "
                  << (value.empty() ? "\"\"" : value) << "\n";
      }
      std::cout << "\n";
    }
  } catch (const std::exception& ex) {
    std::cerr << ex.what() << "\n";
    return 1;
  }
  return 0;
}
