#pragma once
/// The nodes every Core adds on its own: TROUPE_NODES=host:port,... with the token in
/// TROUPE_NODE_TOKEN_FILE (the troupe command's -nodes and -node_token_file set them).
#include <troupe/core.hpp>

namespace troupe {

void add_nodes_from_environment(Core& core);

} // namespace troupe
