"""Property keys, as openvino.properties: each is the property's name (a str, usable as a dict
key) and, called with a value, a (name, value) pair:

    core.set_property("CPU", {properties.inference_num_threads: 4})
    core.set_property("CPU", dict([properties.inference_num_threads(4)]))
    properties.enable_profiling() == "PERF_COUNT"

Plain string keys and values work as well ({"PERF_COUNT": "YES"}).
"""
from __future__ import annotations

from typing import Any, Tuple, Union


class Property(str):
    """A property's name; `key(value)` makes a (name, value) pair, `key()` gives the name."""

    def __call__(self, *args: Any) -> Union[str, Tuple[str, Any]]:
        if not args:
            return str(self)
        if len(args) == 1:
            return (str(self), args[0])
        raise TypeError(f"property {str(self)} takes one value, got {len(args)}")


enable_profiling = Property("PERF_COUNT")
cache_dir = Property("CACHE_DIR")
inference_num_threads = Property("INFERENCE_NUM_THREADS")
num_streams = Property("NUM_STREAMS")
optimal_number_of_infer_requests = Property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")
available_devices = Property("AVAILABLE_DEVICES")
supported_properties = Property("SUPPORTED_PROPERTIES")
execution_devices = Property("EXECUTION_DEVICES")
loaded_from_cache = Property("LOADED_FROM_CACHE")

from troupe.properties import device, hint, streams  # noqa: E402  (they use Property)

__all__ = ["Property", "enable_profiling", "cache_dir", "inference_num_threads", "num_streams",
           "optimal_number_of_infer_requests", "available_devices", "supported_properties",
           "execution_devices", "loaded_from_cache", "device", "hint", "streams"]
