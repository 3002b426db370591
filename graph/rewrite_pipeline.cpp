/// rewrite: the graph passes in the one order every compile uses.
#include "graph/passes.hpp"

namespace troupe::graph {

void rewrite(Graph& g) {
  // Hard-swish first: fold_conv_input_scale would otherwise fold the pattern's final "/ 6"
  // into the next Conv's weights and leave x * Clip(x + 3, 0, 6) as two ops (an Add with a
  // fused Clip, then a Mul) where one HardSwish fuses into its Conv as a post-op.
  eliminate_identities(g);
  scalar_prelu_as_leaky_relu(g);
  fuse_hardswish(g);
  fuse_gelu(g);
  fuse_layer_norm(g);
  // After fuse_layer_norm, which looks for ReduceMean.
  reduce_as_global_pool(g);
  // A per-channel Add between a conv and its BN (a ConvTranspose's bias, exported apart) folds
  // into the BN first, so that the BN then folds into the conv in this same pass: the other
  // order left it to a second rewrite, which HETERO runs (once planned, once compiled) and a
  // single device does not, so the two compiled different graphs.
  fold_shift_into_batch_norm(g);
  fold_batch_norm(g);
  fold_conv_affine(g);
  fold_conv_input_scale(g);
  fuse_activations(g);
}

} // namespace troupe::graph
