"""openvino.runtime's counterpart: the package's names again (`from troupe.runtime import Core`)."""
from troupe import *  # noqa: F401,F403
from troupe import __all__, __version__, preprocess, properties  # noqa: F401
