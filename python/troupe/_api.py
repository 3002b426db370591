"""OpenVINO's Python classes (openvino.runtime.ie_api) over the compiled _troupe module: the
same names and signatures; properties given as OpenVINO's keys and values become troupe's
strings here, and results come back as a read-only mapping (OVDict)."""
from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Dict, Iterator, List, Optional, Tuple

from troupe import _troupe
from troupe._troupe import ConstOutput, Model, Type
from troupe.properties import hint


# ---- properties: OpenVINO's keys and values -> troupe's strings, and back ----

def _device_properties_text(key: str, props: Any) -> str:
    """{NUM_STREAMS: 2} -> "{NUM_STREAMS:2}", as troupe::device_properties writes it."""
    if not isinstance(props, dict):
        raise TypeError(f"property {key}: the properties of a device are a dict, not {type(props).__name__}")
    items = []
    for k, v in props.items():
        name = _key_text(k)
        text = _value_text(name, v)
        quote = any(c in text for c in ",:{}")
        items.append(f"{name}:" + (f'"{text}"' if quote else text))
    return "{" + ",".join(items) + "}"


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return str.__str__(key)
    raise TypeError(f"a property key is a str or a troupe.properties key, not {type(key).__name__}")


def _value_text(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "YES" if value else "NO"
    if isinstance(value, enum.Enum):
        return _value_text(key, value.value)
    if isinstance(value, Type):
        return value.get_type_name()
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    if isinstance(value, dict):
        return _device_properties_text(key, value)
    raise TypeError(f"property {key}: a value of type {type(value).__name__} ({value!r}) is not a property value "
                    "(str, int, float, bool, an enum, a list of str)")


def _properties(config: Any) -> Dict[str, str]:
    """A dict {key: value}, one (key, value) pair or a list of pairs -> {name: text}."""
    if config is None:
        return {}
    if isinstance(config, tuple) and len(config) == 2 and isinstance(config[0], str):
        config = dict([config])
    elif isinstance(config, (list, tuple)):
        if not all(isinstance(p, tuple) and len(p) == 2 for p in config):
            raise TypeError("properties are a dict {name: value} or a list of (name, value) pairs")
        config = dict(config)
    if not isinstance(config, dict):
        raise TypeError(f"properties are a dict {{name: value}}, not {type(config).__name__}")
    out: Dict[str, str] = {}
    for key, value in config.items():
        name = _key_text(key)
        if name == "DEVICE_PROPERTIES" and isinstance(value, dict):
            for device, props in value.items():
                out[_key_text(device)] = _device_properties_text(device, props)
        else:
            out[name] = _value_text(name, value)
    return out


_INT_PROPERTIES = {"OPTIMAL_NUMBER_OF_INFER_REQUESTS", "INFERENCE_NUM_THREADS", "PERFORMANCE_HINT_NUM_REQUESTS",
                   "NUM_STREAMS", "NODE_TIMEOUT_MS", "RUNTIME_COMPILES", "RUNTIME_CACHE_CAPACITY"}
_FLOAT_PROPERTIES = {"RUNTIME_COMPILE_MS"}
_BOOL_PROPERTIES = {"PERF_COUNT", "LOADED_FROM_CACHE"}
_LIST_PROPERTIES = {"AVAILABLE_DEVICES", "SUPPORTED_PROPERTIES", "EXECUTION_DEVICES", "OPTIMIZATION_CAPABILITIES"}


def _typed(name: str, text: str) -> Any:
    """A property's text as OpenVINO's Python returns it: int, bool, list, PerformanceMode, Type."""
    name = str.__str__(name)
    if name in _INT_PROPERTIES:
        try:
            return int(text)
        except ValueError:
            return text  # "AUTO"
    if name in _FLOAT_PROPERTIES:
        try:
            return float(text)
        except ValueError:
            return text
    if name in _BOOL_PROPERTIES:
        return text.upper() in ("YES", "TRUE", "1")
    if name in _LIST_PROPERTIES:
        return [t for t in text.split(",") if t]
    if name == "PERFORMANCE_HINT":
        try:
            return hint.PerformanceMode(text)
        except ValueError:
            return text
    if name == "INFERENCE_PRECISION_HINT":
        try:
            return Type.from_string(text)
        except RuntimeError:
            return text
    return text


# ---- results ----

class OVDict(Mapping):
    """An inference's outputs: a read-only mapping from output port to numpy array, also indexed
    by output index and by name."""

    __slots__ = ("_ports", "_values")

    def __init__(self, ports: List[ConstOutput], values: List[Any]) -> None:
        self._ports = ports
        self._values = values

    def _index(self, key: Any) -> int:
        if isinstance(key, int):
            if -len(self._values) <= key < len(self._values):
                return key % len(self._values)
            raise KeyError(f"output index {key} is out of range: there are {len(self._values)} outputs")
        if isinstance(key, str):
            for i, p in enumerate(self._ports):
                if p.get_any_name() == key:
                    return i
            raise KeyError(f"no output named '{key}'; the outputs: {', '.join(p.get_any_name() for p in self._ports)}")
        if isinstance(key, ConstOutput):
            for i, p in enumerate(self._ports):
                if p.get_any_name() == key.get_any_name():
                    return i
            raise KeyError(f"'{key.get_any_name()}' is not an output of this model")
        raise TypeError(f"results are keyed by an output port, index or name, not {type(key).__name__}")

    def __getitem__(self, key: Any) -> Any:
        return self._values[self._index(key)]

    def __contains__(self, key: Any) -> bool:
        try:
            self._index(key)
            return True
        except (KeyError, TypeError):
            return False

    def __iter__(self) -> Iterator[ConstOutput]:
        return iter(self._ports)

    def __len__(self) -> int:
        return len(self._ports)

    def names(self) -> Tuple[set, ...]:
        return tuple(p.get_names() for p in self._ports)

    def to_dict(self) -> Dict[ConstOutput, Any]:
        return dict(zip(self._ports, self._values))

    def to_tuple(self) -> tuple:
        return tuple(self._values)

    def __repr__(self) -> str:
        return "<OVDict: {" + ", ".join(f"{p.get_any_name()}: {v!r}" for p, v in zip(self._ports, self._values)) + "}>"


# ---- the classes ----

class InferRequest(_troupe.InferRequest):
    """One inference request (as ov.InferRequest)."""

    def __init__(self, other: _troupe.InferRequest) -> None:
        super().__init__(other)
        self._ports = super().model_outputs

    def infer(self, inputs: Any = None, share_inputs: bool = False, share_outputs: bool = False) -> OVDict:
        """Sets `inputs` (a dict keyed by index, name or port, a list, or one array), runs one
        inference and returns its outputs. share_inputs=True: C-contiguous arrays of the input's
        type are used in place (kept alive until the request is done); others are converted."""
        return OVDict(self._ports, super().infer(inputs, share_inputs, share_outputs))

    @property
    def results(self) -> OVDict:
        """The outputs of the last inference."""
        return OVDict(self._ports, self._outputs(False))

    @property
    def model_outputs(self) -> List[ConstOutput]:
        return self._ports


class CompiledModel(_troupe.CompiledModel):
    """A model compiled for a device (as ov.CompiledModel)."""

    def __init__(self, other: _troupe.CompiledModel) -> None:
        super().__init__(other)
        self._request: Optional[InferRequest] = None

    def create_infer_request(self) -> InferRequest:
        return InferRequest(super().create_infer_request())

    def infer_new_request(self, inputs: Any = None) -> OVDict:
        """One inference on a new request."""
        return self.create_infer_request().infer(inputs)

    def __call__(self, inputs: Any = None, share_inputs: bool = False, share_outputs: bool = False) -> OVDict:
        """One inference on the compiled model's own request (made at the first call)."""
        if self._request is None:
            self._request = self.create_infer_request()
        return self._request.infer(inputs, share_inputs=share_inputs, share_outputs=share_outputs)

    def get_property(self, name: str) -> Any:
        return _typed(name, super().get_property(_key_text(name)))

    def set_property(self, properties: Any) -> None:
        """DEVICE_PRIORITIES of MULTI (and of AUTO with CUMULATIVE_THROUGHPUT), from the next request."""
        super().set_property(_properties(properties))

    def export_model(self, model_stream: Any = None) -> Optional[bytes]:
        """The compiled model's bytes, or written to `model_stream` (a file object) when given."""
        data = super().export_model()
        if model_stream is None:
            return data
        model_stream.write(data)
        return None


class AsyncInferQueue(_troupe.AsyncInferQueue):
    """A pool of `jobs` requests (0: the compiled model's OPTIMAL_NUMBER_OF_INFER_REQUESTS), as
    ov.AsyncInferQueue: start_async(inputs, userdata) queues the job while fewer than len(queue)
    wait (it starts as soon as a request is free), else waits for room;
    set_callback(cb) runs cb(request, userdata) after each; wait_all() raises what a callback raised."""

    def __init__(self, model: CompiledModel, jobs: int = 0) -> None:
        super().__init__(model, jobs, InferRequest)

    def __iter__(self) -> Iterator[InferRequest]:
        return (self[i] for i in range(len(self)))


class Core(_troupe.Core):
    """The entry point (as ov.Core)."""

    def read_model(self, model: Any, weights: Any = None) -> Model:
        """From an .onnx path (str or os.PathLike) or the model's bytes."""
        return super().read_model(model, weights)

    def compile_model(self, model: Any, device_name: Optional[str] = None, config: Any = None) -> CompiledModel:
        """A Model or an .onnx path, for `device_name` (AUTO when None), with `config` properties."""
        return CompiledModel(super().compile_model(model, "AUTO" if device_name is None else device_name,
                                                   _properties(config)))

    def query_model(self, model: Model, device_name: str, config: Any = None) -> Dict[str, str]:
        return super().query_model(model, device_name, _properties(config))

    def set_property(self, device_name: Any = None, properties: Any = None) -> None:
        """set_property(device_name, properties) for a device, set_property(properties) for the
        Core itself (CACHE_DIR)."""
        if properties is None and not isinstance(device_name, str):
            super().set_core_property(_properties(device_name))
        else:
            super().set_property(device_name, _properties(properties))

    def get_property(self, device_name: str, name: str) -> Any:
        return _typed(name, super().get_property(device_name, _key_text(name)))

    def import_model(self, model_stream: Any, device_name: str, config: Any = None) -> CompiledModel:
        """A model written by CompiledModel.export_model: bytes or a readable file object."""
        data = model_stream.read() if hasattr(model_stream, "read") else model_stream
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        if not isinstance(data, bytes):
            raise TypeError(f"model_stream is bytes or a file object, not {type(model_stream).__name__}")
        return CompiledModel(super().import_model(data, device_name, _properties(config)))

    def add_node(self, address: str, options: Any = None) -> None:
        """Adds a troupe worker's devices (DEV@host:port); troupe's own."""
        super().add_node(address, _properties(options))


def compile_model(model: Any, device_name: Optional[str] = None, config: Any = None) -> CompiledModel:
    """Reads and compiles in one call, on a Core of its own (the compiled model keeps it alive)."""
    return Core().compile_model(model, device_name, config)
