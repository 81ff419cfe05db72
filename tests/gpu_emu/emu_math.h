/* emu_math.h - what the emulated cuDNN and cuBLAS (fake_cuda.cpp) were
 * asked for on fp32 data: convolutions by the math type they ran with,
 * GEMMs by their compute type, counted at the call. A request that
 * permits TF32 (CUDNN_TENSOR_OP_MATH or CUDNN_DEFAULT_MATH on fp32, as on
 * Ampere and later; CUBLAS_COMPUTE_32F_FAST_TF32) runs with its inputs
 * rounded to TF32 (10 mantissa bits, to nearest, ties away from zero, as
 * cvt.rna.tf32.f32) and fp32 accumulation; the others in plain fp32. For
 * the tests of the emulated build (group gpu-layers there), C and C++.
 * The same calls are also counted by layout, whatever their data type.
 * What this is not: a count of bf16/fp16 work by math type, or anything
 * of a real GPU.
 */
#ifndef HVD_TESTS_EMU_MATH_H
#define HVD_TESTS_EMU_MATH_H

struct emu_math_requests {
	long conv_fma, conv_tf32, conv_other;   /* FMA; TENSOR_OP; anything else (DEFAULT...) */
	long gemm_32f, gemm_tf32, gemm_other;   /* COMPUTE_32F; COMPUTE_32F_FAST_TF32; else */
	/* every data type: convolutions by their filter's format (KCRS:
	 * CUDNN_TENSOR_NCHW, KRSC: CUDNN_TENSOR_NHWC) and by their input
	 * tensor's strides (channels outermost or innermost) */
	long conv_kcrs, conv_krsc, conv_nchw, conv_nhwc;
};

#ifdef __cplusplus
extern "C"
#endif
/* The counts since the last call, then zero. */
void emu_math_requests_take(struct emu_math_requests *out);

#endif
