# Third-party packages, all from Debian.
find_package(Protobuf REQUIRED)           # must precede ONNX
find_package(ONNX CONFIG REQUIRED)        # targets: onnx, onnx_proto (ONNX_ML=1)
find_package(dnnl CONFIG REQUIRED)        # DNNL::dnnl (its config wants OpenCL)
find_package(OpenMP REQUIRED)
find_package(Threads REQUIRED)
find_package(Vulkan REQUIRED COMPONENTS glslangValidator) # GPU device; glslang compiles the shaders at build time
find_package(Boost 1.74 REQUIRED COMPONENTS unit_test_framework)
find_package(nlohmann_json CONFIG REQUIRED) # nlohmann_json::nlohmann_json: the CLI's JSON reports and configs
find_package(pugixml CONFIG REQUIRED)      # pugixml::pugixml: OpenVINO IR .xml (graph/ir_xml_*.cpp)
find_package(OpenSSL REQUIRED)            # OpenSSL::SSL: TLS to worker nodes (with caf_openssl); files checked before CAF loads them

# CAF 0.17 ships neither a CMake config nor a .pc file.
find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
find_library(CAF_IO_LIBRARY caf_io REQUIRED)
find_library(CAF_OPENSSL_LIBRARY caf_openssl REQUIRED)
add_library(caf::core UNKNOWN IMPORTED)
set_target_properties(caf::core PROPERTIES IMPORTED_LOCATION ${CAF_CORE_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES Threads::Threads)
add_library(caf::io UNKNOWN IMPORTED)
set_target_properties(caf::io PROPERTIES IMPORTED_LOCATION ${CAF_IO_LIBRARY}
  INTERFACE_LINK_LIBRARIES caf::core)
add_library(caf::openssl UNKNOWN IMPORTED)
set_target_properties(caf::openssl PROPERTIES IMPORTED_LOCATION ${CAF_OPENSSL_LIBRARY}
  INTERFACE_LINK_LIBRARIES "caf::io;OpenSSL::SSL")
