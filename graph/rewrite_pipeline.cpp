/// rewrite: the graph passes in the one order every compile uses.
#include "graph/passes.hpp"

namespace troupe::graph {

void rewrite(Graph& g) {
  // Hard-swish first: fold_conv_input_scale would otherwise fold the pattern's final "/ 6"
  // into the next Conv's weights and leave x * Clip(x + 3, 0, 6) as two ops (an Add with a
  // fused Clip, then a Mul) where one HardSwish fuses into its Conv as a post-op.
  eliminate_identities(g);
  fuse_hardswish(g);
  fuse_gelu(g);
  fuse_layer_norm(g);
  fold_batch_norm(g);
  fold_shift_into_batch_norm(g);
  fold_conv_affine(g);
  fold_conv_input_scale(g);
  fuse_activations(g);
}

} // namespace troupe::graph
