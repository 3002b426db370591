"""openvino.properties.device: device names, priorities and per-device properties."""
from __future__ import annotations

from typing import Any, Tuple, Union

from troupe.properties import Property

priorities = Property("DEVICE_PRIORITIES")
full_name = Property("FULL_DEVICE_NAME")
capabilities = Property("OPTIMIZATION_CAPABILITIES")


class _DeviceProperties(Property):
    """properties("CPU", {...}): properties for one device of HETERO/MULTI/AUTO only;
    properties({"CPU": {...}, "GPU": {...}}) for several."""

    def __call__(self, *args: Any) -> Union[str, Tuple[str, Any]]:
        if not args:
            return str(self)
        if len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], dict):
            return (args[0], args[1])
        if len(args) == 1 and isinstance(args[0], dict):
            return (str(self), args[0])
        raise TypeError("device.properties takes (device_name, {property: value}) or {device_name: {property: value}}")


properties = _DeviceProperties("DEVICE_PROPERTIES")

__all__ = ["priorities", "full_name", "capabilities", "properties"]
