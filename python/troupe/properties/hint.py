"""openvino.properties.hint: performance hints."""
from enum import Enum

from troupe.properties import Property


class PerformanceMode(str, Enum):
    """PERFORMANCE_HINT's values; each equals its string ("LATENCY")."""

    LATENCY = "LATENCY"
    THROUGHPUT = "THROUGHPUT"
    CUMULATIVE_THROUGHPUT = "CUMULATIVE_THROUGHPUT"

    def __str__(self) -> str:
        return self.value


performance_mode = Property("PERFORMANCE_HINT")
num_requests = Property("PERFORMANCE_HINT_NUM_REQUESTS")
inference_precision = Property("INFERENCE_PRECISION_HINT")

__all__ = ["PerformanceMode", "performance_mode", "num_requests", "inference_precision"]
