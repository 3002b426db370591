# `cmake --install build --prefix P`: the public headers, libtroupe, a CMake package
# (find_package(troupe CONFIG) -> troupe::troupe) and a pkg-config file (troupe.pc).
# Components (cmake --install --component C; the Debian packages, cmake/packaging.cmake):
#   runtime  the shared library's libtroupe.so.N (nothing for a static build)
#   dev      headers, libtroupe.so (the link) or libtroupe.a, CMake package, troupe.pc, bin/troupe
#   python   the Python package (python/CMakeLists.txt)
include(CMakePackageConfigHelpers)

set(troupe_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/troupe)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/troupe ${PROJECT_BINARY_DIR}/include/troupe
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev FILES_MATCHING PATTERN "*.hpp")
install(TARGETS troupe EXPORT troupe_targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
# The command-line tool goes with the development files: a libtroupeN package holds the library
# alone, so that two of them (N and N+1) can be installed side by side.
install(TARGETS troupe_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)
# The installed command finds a shared libtroupe beside it, whatever the prefix.
set_target_properties(troupe_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")

# A static libtroupe needs the internal layers' archives at the consumer's link: they go to
# lib/troupe/, out of the way, and into the export set (their headers stay uninstalled). A
# shared libtroupe holds them already.
set(troupe_internal_libs troupe_actors troupe_kernels_cpu troupe_kernels_reference troupe_graph troupe_base)
if(TARGET troupe_kernels_vulkan)
  list(INSERT troupe_internal_libs 1 troupe_kernels_vulkan)
endif()
if(NOT BUILD_SHARED_LIBS)
  install(TARGETS ${troupe_internal_libs} EXPORT troupe_targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}/troupe COMPONENT dev)
endif()
install(EXPORT troupe_targets NAMESPACE troupe:: DESTINATION ${troupe_cmake_dir} COMPONENT dev)

set(TROUPE_SHARED ${BUILD_SHARED_LIBS})
if(NOT TROUPE_SHARED)
  set(TROUPE_SHARED OFF)
endif()
if(TARGET troupe_kernels_vulkan)
  set(TROUPE_WITH_VULKAN ON)
else()
  set(TROUPE_WITH_VULKAN OFF)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/troupeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/troupeConfig.cmake INSTALL_DESTINATION ${troupe_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/troupeConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/troupeConfig.cmake ${PROJECT_BINARY_DIR}/troupeConfigVersion.cmake
        DESTINATION ${troupe_cmake_dir} COMPONENT dev)

# pkg-config: a static libtroupe lists every archive and library it needs (paths resolved here).
if(BUILD_SHARED_LIBS)
  set(troupe_pc_libs "-L\${libdir} -ltroupe")
else()
  set(troupe_pc_libs "-L\${libdir} -ltroupe -L\${libdir}/troupe")
  foreach(lib ${troupe_internal_libs})
    string(APPEND troupe_pc_libs " -l${lib}")
  endforeach()
  # pugixml::pugixml is an interface target over pugixml::shared, the library file itself.
  set(troupe_pc_deps caf::openssl caf::io caf::core DNNL::dnnl onnx onnx_proto protobuf::libprotobuf pugixml::shared)
  if(TROUPE_WITH_VULKAN)
    list(APPEND troupe_pc_deps Vulkan::Vulkan)
  endif()
  foreach(dep ${troupe_pc_deps})
    string(APPEND troupe_pc_libs " $<TARGET_LINKER_FILE:${dep}>")
  endforeach()
  string(APPEND troupe_pc_libs " -lssl -lcrypto -fopenmp -pthread")
  if(TROUPE_SANITIZE)
    string(APPEND troupe_pc_libs " -fsanitize=address,undefined")
  endif()
endif()
# The prefix relative to the .pc file: lib/pkgconfig or, for /usr on Debian, lib/<multiarch>/pkgconfig.
file(RELATIVE_PATH troupe_pc_to_prefix /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" troupe_pc_to_prefix "${troupe_pc_to_prefix}")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/troupe.pc CONTENT "prefix=\${pcfiledir}/${troupe_pc_to_prefix}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: troupe
Description: Actor-model dataflow inference engine for ONNX models (OpenVINO-style API)
Version: ${PROJECT_VERSION}
Cflags: -I\${includedir} -std=c++20
Libs: ${troupe_pc_libs}
")
install(FILES ${PROJECT_BINARY_DIR}/troupe.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
