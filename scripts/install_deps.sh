#!/usr/bin/env bash
# Installs everything troupe builds, tests and benchmarks with (Debian packages; run as root).
set -euo pipefail
pkgs=(cmake ninja-build g++ clang libclang-rt-14-dev
      libcaf-dev libdnnl-dev ocl-icd-opencl-dev libboost-test-dev nlohmann-json3-dev
      libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
      libpugixml-dev # OpenVINO IR (.xml) reader and writer: the XML parser OpenVINO itself uses
      libvulkan-dev mesa-vulkan-drivers glslang-tools glslang-dev spirv-tools
      python3 python3-onnx python3-numpy pkg-config
      pybind11-dev python3-dev python3-pytest # the Python package (python/) and its tests
      python3-pil # python -m troupe.ocr reads PNG and JPEG images with Pillow (its pipeline takes numpy)
      python3-venv python3-setuptools python3-wheel # pip install --no-build-isolation . in a venv (docs/python.md)
      dpkg-dev file # scripts/package_deb.sh: cpack -G DEB runs dpkg-shlibdeps and file
      iproute2   # ip and tc: remote_tests across network namespaces (tests/netns_remote.sh)
      libssl-dev openssl # TLS to worker nodes; remote_tests make their certificates with openssl
      libpng-dev libjpeg-dev # troupe_ocr reads PNG and JPEG images
      libfreetype-dev fonts-dejavu-core fonts-wqy-microhei) # its tests render text in Latin and Chinese fonts
command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The GPU tests run on lavapipe (mesa-vulkan-drivers): scripts/test.sh copies its ICD file twice.
if ! ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1; then
  echo "install_deps: lavapipe's ICD file (/usr/share/vulkan/icd.d/lvp_icd.*.json) is missing" >&2
  exit 1
fi
