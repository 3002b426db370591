// Shared by every troupe compute shader: the linear invocation id over a 2-D grid of
// 64-wide workgroups (so more than 65535 groups fit), and the fused activations
// (docs/internals.md: attrs activation/activation_params), chosen by specialization
// constants 60..62 so the driver folds the unused branches away.
// Storage type: F16 builds the variant that keeps every float tensor as float16 in memory
// (INFERENCE_PRECISION_HINT=f16); loads widen to f32, stores narrow (but see F16_MATH).
#ifdef F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define SFLOAT float16_t
#define SWORD float16_t
#define FMT1 r16f
#define FMT4 rgba16f
#else
#define SFLOAT float
#define SWORD uint
#define FMT1 r32f
#define FMT4 rgba32f
#endif

// Arithmetic type of the hot loops (Conv, MatMul, Gemm): F16_MATH (always with F16) keeps the
// loaded operands and the accumulators in float16 (INFERENCE_PRECISION_HINT=f16 on a device
// whose f16 math is native); everything else computes in f32.
#ifdef F16_MATH
#define AFLOAT float16_t
#define AVEC4 f16vec4
#else
#define AFLOAT float
#define AVEC4 vec4
#endif

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(constant_id = 60) const int ACT = 0;
layout(constant_id = 61) const float ACT_A = 0.0;
layout(constant_id = 62) const float ACT_B = 0.0;

uint linear_id() { return gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x; }

// The slice (gl_WorkGroupID.z of the whole op): an op with more slices than a dispatch takes
// (maxComputeWorkGroupCount[2]) runs as several dispatches, each told where it starts.
layout(constant_id = 59) const uint SLICE_BASE = 0u;
uint slice_id() { return gl_WorkGroupID.z + SLICE_BASE; }

float act_fn(int code, float x, float a, float b) {
  if (code == 1) return max(x, 0.0);                                  // Relu
  if (code == 2) return 1.0 / (1.0 + exp(-x));                        // Sigmoid
  if (code == 3) return tanh(clamp(x, -15.0, 15.0));                  // Tanh
  if (code == 4) return clamp(a * x + b, 0.0, 1.0);                   // HardSigmoid
  if (code == 5) return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);           // HardSwish
  if (code == 6) return min(max(x, a), b);                            // Clip
  if (code == 7) return x >= 0.0 ? x : a * x;                         // LeakyRelu
  return x;
}

// A scalar affine map after the activation (y = act(x) * POST_SCALE + POST_SHIFT): Mul/Add by
// scalar constants that follow a conv, folded into its store (kernels/vulkan/lower_post_affine.cpp).
layout(constant_id = 63) const bool HAS_POST = false;
layout(constant_id = 64) const float POST_SCALE = 1.0;
layout(constant_id = 65) const float POST_SHIFT = 0.0;

float activate(float x) {
  float y = act_fn(ACT, x, ACT_A, ACT_B);
  return HAS_POST ? y * POST_SCALE + POST_SHIFT : y;
}
