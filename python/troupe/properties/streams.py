"""openvino.properties.streams: NUM_STREAMS."""
from troupe.properties import Property


class Num:
    """Special NUM_STREAMS values."""

    AUTO = "AUTO"


num = Property("NUM_STREAMS")

__all__ = ["Num", "num"]
