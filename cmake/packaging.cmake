# Debian packages (-DTROUPE_PACKAGE_DEB=ON, then `cpack -G DEB`; scripts/package_deb.sh does both):
#   libtroupe<SOVERSION>  libtroupe.so.<SOVERSION> (the install component `runtime`)
#   libtroupe-dev         headers, the libtroupe.so link, the CMake package, troupe.pc and the
#                         `troupe` command (`dev`)
#   python3-troupe        the Python package in /usr/lib/python3/dist-packages (`python`)
# Packages of the shared library only: a static libtroupe stays `cmake --install` of a static
# build (docs/getting-started.md). Included from the top CMakeLists before the subdirectories:
# it sets the install layout the packages need.
if(NOT BUILD_SHARED_LIBS)
  message(FATAL_ERROR "TROUPE_PACKAGE_DEB packages the shared library: configure with -DBUILD_SHARED_LIBS=ON -DTROUPE_TESTS=OFF")
endif()
# GNUInstallDirs (included first) chose lib/<multiarch> from this prefix; the packages install into /usr.
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(FATAL_ERROR "TROUPE_PACKAGE_DEB needs -DCMAKE_INSTALL_PREFIX=/usr (got ${CMAKE_INSTALL_PREFIX})")
endif()
# libtroupe.so.N lies in the loader's own path: the installed tool and extension need no RPATH.
set(CMAKE_SKIP_INSTALL_RPATH ON)
# cpack installs without building `all` first (tests are off; benchmarks, examples and the OCR
# tool are not packaged): build troupe, troupe_cli and troupe_python before cpack.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
# Debian's python3 looks in /usr/lib/python3/dist-packages (not lib/python3.X/site-packages).
if(NOT DEFINED TROUPE_PYTHON_INSTALL_DIR)
  set(TROUPE_PYTHON_INSTALL_DIR lib/python3/dist-packages)
endif()

set(CPACK_PACKAGE_NAME troupe)
set(CPACK_PACKAGE_VENDOR troupe)
# The Maintainer field (required by dpkg): a placeholder unless the builder names one.
if(NOT DEFINED CPACK_PACKAGE_CONTACT)
  set(CPACK_PACKAGE_CONTACT "troupe developers <troupe@localhost>")
endif()
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
if(TROUPE_PYTHON)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()

set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(troupe_deb_version ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})
set(troupe_runtime_package libtroupe${PROJECT_VERSION_MAJOR})

# Run-time dependencies from dpkg-shlibdeps, per package (libc6, libstdc++6, libcaf-core0.17,
# libdnnl2, libvulkan1, libprotobuf32, libonnx1, libpugixml1v5, libgomp1, ...). It cannot give
# libtroupeN itself to the tool and the extension (that package is built in the same run, not
# installed): cpack runs it with --ignore-missing-info and the build's lib/ as a private folder,
# and the exact-version dependency on libtroupeN is written here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${troupe_runtime_package})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# A shlibs file for the package with a SONAME (libtroupe 0 libtroupe0 (>= version)), so that a
# program packaged against it gets its dependency from dpkg-shlibdeps. (CPack has no per-package
# form of these two.)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# GPU.N devices need a Vulkan driver at run time (lavapipe is mesa-vulkan-drivers); without one
# there is simply no GPU device.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "mesa-vulkan-drivers")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "actor-model dataflow inference engine for ONNX models (shared library)
 troupe runs ONNX models (and reads OpenVINO IR) on CPU (oneDNN), Vulkan GPUs and remote
 worker nodes through an OpenVINO-style C++ API. This package holds the shared library.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libtroupe-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# Only troupe/caf.hpp (the opt-in CAF embedding) includes another library's headers: CAF's.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${troupe_runtime_package} (= ${troupe_deb_version})")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "pkg-config | cmake")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "libcaf-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION "actor-model dataflow inference engine for ONNX models (development files)
 troupe runs ONNX models (and reads OpenVINO IR) on CPU (oneDNN), Vulkan GPUs and remote
 worker nodes through an OpenVINO-style C++ API. This package holds the C++20 headers, the
 CMake package (find_package(troupe CONFIG) -> troupe::troupe), the pkg-config file troupe.pc
 and the troupe command-line tool. troupe/caf.hpp, the CAF embedding, needs libcaf-dev.")

if(TROUPE_PYTHON)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-troupe)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  # The extension is built for this Python (_troupe.cpython-3XY-<multiarch>.so).
  math(EXPR troupe_py_next "${Python_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
      "${troupe_runtime_package} (= ${troupe_deb_version}), python3 (>= ${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}~), python3 (<< ${Python_VERSION_MAJOR}.${troupe_py_next}), python3-numpy")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS "python3-pil")
  set(CPACK_DEBIAN_PYTHON_DESCRIPTION "actor-model dataflow inference engine for ONNX models (Python 3)
 troupe runs ONNX models (and reads OpenVINO IR) on CPU (oneDNN), Vulkan GPUs and remote
 worker nodes. This package holds the Python module troupe, OpenVINO's Python API over it
 (import troupe as ov).")
endif()

include(CPack)
