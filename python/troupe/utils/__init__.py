"""openvino.utils' counterparts."""
