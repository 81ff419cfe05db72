/* gpu_audit_policy.c - what the GPU source audit (group gpu-audit,
 * tests/test_gpu_audit.c) allows, each exception with its reason: calls
 * not wrapped in their checking macro (rule 1), the functions that may
 * allocate or release (rule 2), and the functions that may wait for the
 * GPU (rule 3). Entries name (file, function[, call]), never lines, so
 * edits elsewhere do not disturb them; an entry nothing needs any more
 * fails the group, so the tables stay as short as the code allows.
 * What it is not: the scanner (gpu_audit.c).
 */
#include <stddef.h>

#include "gpu_audit.h"

/* Functions that turn a status into text: nothing to check. */
static const char *const status_text[] = {
	"cudaGetErrorString", "cudaGetErrorName", "cudnnGetErrorString",
	"cublasGetStatusString", "cublasGetStatusName", "ncclGetErrorString",
	"ncclGetLastError", NULL,
};

/* No checking macros there: each status is compared by hand and named in
 * the message (`hvd: CALL: 'what': library error string`). */
static const char *const hand_checked[] = { "runtime/transport/comm_nccl.c", NULL };

#define DESTROY_VOID "destroy path: backend.h's destroy returns void, there is no one to " \
	"tell and nothing to undo; every resource is released either way"

/* Rule 1: calls not wrapped in their checking macro. */
static const struct audit_allow unchecked[] = {
	{ "*.cu", "*", "cudaGetLastError", 1, "kernel wrappers return the launch status; "
	  "every gpu_k_* call is itself checked with GPU_CUDA (rule 1)" },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_devices", "cudaGetDeviceCount", 0,
	  "checked by hand: none (or its error) makes --backend auto take the CPU, and "
	  "--backend gpu fail with \"no usable CUDA device (error string)\"" },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_libraries", "cudaRuntimeGetVersion", 0,
	  "checked by hand: the run's record says the version is unknown and why" },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_libraries", "cudnnGetVersion", 0,
	  "returns the version number, not a status" },
	{ "trainer/backend/gpu/conv_algos_start.c", "device_identity", "cudnnGetVersion", 0,
	  "returns the version number, not a status" },
	{ "trainer/backend/gpu/gpu_backend.c", "unregister_host", "cudaHostUnregister", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_destroy", "cudaStreamSynchronize", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_destroy", "cudaEventDestroy", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_destroy", "cudaFreeHost", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_destroy", "cudaFree", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_destroy", "cublasDestroy", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_destroy", "cudnnDestroy", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_destroy", "cudaStreamDestroy", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/conv.c", "gpu_conv_destroy", "cudnnDestroyTensorDescriptor", 0,
	  DESTROY_VOID },
	{ "trainer/backend/gpu/conv.c", "gpu_conv_destroy", "cudnnDestroyFilterDescriptor", 0,
	  DESTROY_VOID },
	{ "trainer/backend/gpu/conv.c", "gpu_conv_destroy", "cudnnDestroyConvolutionDescriptor", 0,
	  DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_loss.c", "gpu_loss_teardown", "cudaEventDestroy", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_loss.c", "gpu_loss_teardown", "cudaFreeHost", 0, DESTROY_VOID },
	{ "trainer/backend/gpu/gpu_graph.c", "drop_one", "cudaGraphExecDestroy", 0,
	  "destroy path: gpu_graph_drop returns void (gpu_train_close); nothing to undo" },
	{ "trainer/backend/gpu/gpu_graph.c", "capture", "cudaStreamEndCapture", 0,
	  "failed capture only: the queue's own error is the one reported; this ends the capture" },
	{ "trainer/backend/gpu/gpu_graph.c", "capture", "cudaGraphDestroy", 0,
	  "the recording, released once instantiated (or after a failed capture)" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_close", "cudaEventDestroy", 0,
	  "close path: gpu_train_close returns void" },
	{ "trainer/backend/gpu/gpu_step.c", "fire_ready", "cudaEventSynchronize", 0,
	  "status kept in rc, then GPU_CUDA(rc): file:line and the error string" },
	{ "trainer/backend/gpu/gpu_step.c", "fire_ready", "cudaEventQuery", 0,
	  "status kept in rc: cudaErrorNotReady means poll again later, anything else goes "
	  "through GPU_CUDA(rc)" },
	{ "trainer/backend/gpu/gpu_staging.c", "gpu_staging_close", "cudaStreamSynchronize", 0,
	  "close path: gpu_staging_close returns void" },
	{ "trainer/backend/gpu/gpu_staging.c", "gpu_staging_close", "cudaFree", 0,
	  "close path: gpu_staging_close returns void" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_close", "cudaStreamSynchronize", 0,
	  "close path: gpu_train_close returns void" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_close", "cudaFree", 0,
	  "close path: gpu_train_close returns void" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_close", "cudaFreeHost", 0,
	  "close path: gpu_train_close returns void" },
	{ "runtime/transport/comm_nccl.c", "nccl_stop", "ncclCommAbort", 0,
	  "the abort path itself (where a revoke failed): the error being reported is the one "
	  "that caused it" },
	{ "runtime/transport/comm_nccl.c", "abort_revoked", "ncclCommAbort", 0,
	  "a revoked communicator of no further use (shrunk from, or not this world's): its "
	  "failure was reported when it was revoked" },
	{ "runtime/transport/comm_nccl.c", "nccl_release", "cudaFree", 0,
	  "comm_ops.release returns void (engine.c frees the fusion buffer to grow it)" },
	{ "runtime/transport/comm_nccl.c", "nccl_record_ready", "cudaEventDestroy", 0,
	  "error path: the cudaEventRecord failure is what is returned" },
	{ "runtime/transport/comm_nccl.c", "give_back_event", "cudaEventDestroy", 0,
	  "returns void; only with more than NCCL_EVENT_POOL events outstanding" },
	{ "runtime/transport/comm_nccl.c", "nccl_finalize", "cudaSetDevice", 0,
	  "comm_ops.finalize returns void: shutdown, or an open that failed" },
	{ "runtime/transport/comm_nccl.c", "nccl_finalize", "ncclCommDestroy", 0,
	  "comm_ops.finalize returns void: shutdown, or an open that failed" },
	{ "runtime/transport/comm_nccl.c", "nccl_finalize", "cudaStreamDestroy", 0,
	  "comm_ops.finalize returns void: shutdown, or an open that failed" },
	{ "runtime/transport/comm_nccl.c", "nccl_finalize", "cudaEventDestroy", 0,
	  "comm_ops.finalize returns void: shutdown, or an open that failed" },
	{ "runtime/transport/comm_nccl.c", "nccl_finalize", "cudaFree", 0,
	  "comm_ops.finalize returns void: shutdown, or an open that failed" },
	{ "runtime/transport/comm_nccl.c", "nccl_finalize", "cudaFreeHost", 0,
	  "comm_ops.finalize returns void: shutdown, or an open that failed" },
	{ 0 }
};

/* Rule 2: where allocating or releasing (memory, events, streams, handles,
 * descriptors, communicators) is allowed. */
static const struct audit_place allocating[] = {
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_create", "create: the context" },
	{ "trainer/backend/gpu/gpu_backend.c", "open_device", "create: streams, cuDNN and cuBLAS handles" },
	{ "trainer/backend/gpu/gpu_backend.c", "plan_layers", "create: layer table, conv state, "
	  "gradient events" },
	{ "trainer/backend/gpu/gpu_backend.c", "allocate_pool", "create: the one device pool (M2)" },
	{ "trainer/backend/gpu/gpu_backend.c", "pin_host", "create: pinned staging, page-locked model "
	  "buffers, image events (P4)" },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_destroy", "destroy" },
	{ "trainer/backend/gpu/gpu_backend.c", "unregister_host", "destroy: unpins the model's buffers" },
	{ "trainer/backend/gpu/conv.c", "gpu_conv_setup", "first use only: descriptors are created "
	  "when c->x is NULL, at create (plan_layers); per step it only re-sets them" },
	{ "trainer/backend/gpu/conv.c", "gpu_conv_destroy", "destroy" },
	{ "trainer/backend/gpu/conv_algos_start.c", "gpu_conv_algos_begin", "create (plan_layers): "
	  "the table of the algorithm cache file's entries" },
	{ "trainer/backend/gpu/conv_algos_start.c", "share", "create (plan_layers): the bytes of rank "
	  "0's choices, once" },
	{ "trainer/backend/gpu/gpu_algo_file.c", "gpu_algo_file_read", "create (plan_layers, rank 0): "
	  "the cache file's text, read once" },
	{ "trainer/backend/gpu/gpu_algo_file.c", "gpu_algo_file_format", "create (plan_layers, rank 0): "
	  "the cache file's text, written once" },
	{ "trainer/backend/gpu/gpu_algo_file.c", "gpu_algo_file_write", "create (plan_layers, rank 0): "
	  "frees the text it wrote" },
	{ "trainer/backend/gpu/gpu_loss.c", "gpu_loss_setup", "create: pinned loss inputs and sum, event" },
	{ "trainer/backend/gpu/gpu_loss.c", "gpu_loss_teardown", "destroy" },
	{ "trainer/backend/gpu/gpu_pool_plan.c", "gpu_pool_plan_build", "create: the plan's region "
	  "tables (also the fit check's search at create)" },
	{ "trainer/backend/gpu/gpu_pool_plan.c", "plan_grads", "create (gpu_pool_plan_build): the "
	  "gradients' lifetime arena" },
	{ "trainer/backend/gpu/gpu_pool_plan.c", "plan_rebuilt", "create (gpu_pool_plan_build): the "
	  "rebuilt activations' lifetime arena (--memory-efficient)" },
	{ "trainer/backend/gpu/gpu_pool_plan.c", "gpu_pool_plan_free", "destroy" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_open", "open: the context" },
	{ "trainer/backend/gpu/gpu_train.c", "allocate", "open: moments, sum and stats in one cudaMalloc" },
	{ "trainer/backend/gpu/gpu_staging.c", "gpu_staging_open", "open: the context" },
	{ "trainer/backend/gpu/gpu_staging.c", "stage_grow", "grow on first use: staging for host "
	  "collectives (broadcast, BN averaging, evaluation gathers), never per step" },
	{ "trainer/backend/gpu/gpu_staging.c", "gpu_staging_close", "close" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_close", "close" },
	{ "trainer/backend/gpu/gpu_nvml.c", "gpu_nvml_open", "open: on the first health sample" },
	{ "trainer/backend/gpu/gpu_nvml.c", "gpu_nvml_close", "close" },
	{ "runtime/transport/comm_nccl.c", "comm_nccl_open", "open: the context (released again on "
	  "failure)" },
	{ "runtime/transport/comm_nccl.c", "open_buffers", "open: NCCL stream, chunked buckets' copy "
	  "stream and its three events, device scratch and pinned host scratch for allgatherv's sizes" },
	{ "runtime/transport/comm_nccl.c", "init_comm", "open: the communicator (shrunk or new) and the "
	  "places exchange" },
	{ "runtime/transport/comm_nccl.c", "new_comm", "open: a new communicator and the id exchange "
	  "(init_comm's, where there is nothing to shrink)" },
	{ "runtime/transport/comm_nccl.c", "nccl_alloc", "grow: engine.c allocates the fusion buffer only "
	  "when a larger bucket arrives (the first steps)" },
	{ "runtime/transport/comm_nccl.c", "nccl_release", "grow: the smaller fusion buffer, then at exit" },
	{ "runtime/transport/comm_nccl.c", "nccl_record_ready", "first use: events are created only while "
	  "the free list is empty (the first step); on error the new one is destroyed" },
	{ "runtime/transport/comm_nccl.c", "give_back_event", "only with more than NCCL_EVENT_POOL events "
	  "outstanding: never in steady state" },
	{ "runtime/transport/comm_nccl.c", "nccl_finalize", "close" },
	{ 0 }
};

/* Rule 3: who may wait for the GPU, and why. "step path" entries are the
 * waits backend.h's contract needs host data for. */
static const struct audit_allow waiting[] = {
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_destroy", "cudaStreamSynchronize", 0,
	  "destroy: queued work must end before its memory is freed" },
	{ "trainer/backend/gpu/gpu_backend.c", "gpu_store_state", "cudaStreamSynchronize", 0,
	  "checkpoint: store_state promises host state on return" },
	{ "trainer/backend/gpu/gpu_input.c", "gpu_io_upload", "cudaEventSynchronize", 0,
	  "step path: reuse of the pinned io buffer waits for the previous upload out of it "
	  "(normally long done)" },
	{ "trainer/backend/gpu/gpu_input.c", "queue_upload", "cudaEventSynchronize", 0,
	  "step path: reuse of a pinned image buffer waits for the copy two uploads old" },
	{ "trainer/backend/gpu/gpu_loss.c", "stage_inputs", "cudaEventSynchronize", 0,
	  "step path: reuse of the pinned label buffer waits for the previous upload out of it" },
	{ "trainer/backend/gpu/gpu_train.c", "stage_values", "cudaEventSynchronize", 0,
	  "step path: reuse of the pinned optimizer values waits for the previous upload out of "
	  "them (normally long done)" },
	{ "trainer/backend/gpu/gpu_loss.c", "gpu_loss_take", "cudaStreamSynchronize", 0,
	  "M3: the loss read back every N steps, not every step" },
	{ "trainer/backend/gpu/gpu_step.c", "run_forward", "cudaStreamSynchronize", 0,
	  "evaluation forward only: backend.h returns the logits in y (host); a training "
	  "forward keeps them on the device" },
	{ "trainer/backend/gpu/gpu_step.c", "gpu_step_features", "cudaStreamSynchronize", 0,
	  "class activation maps only (predict --cam, locate): backend.h returns the feature "
	  "maps in host memory; never called in training" },
	{ "trainer/backend/gpu/gpu_step.c", "run_backward", "cudaStreamSynchronize", 0,
	  "step path when host data is asked for: dx, host gradients, fp16's overflow flag" },
	{ "trainer/backend/gpu/gpu_step.c", "fire_ready", "cudaEventSynchronize", 0,
	  "host gradients only (not the device training path): the last layers' gradients "
	  "before their ready() call at the end of backward" },
	{ "trainer/backend/gpu/gpu_staging.c", "stage_grow", "cudaStreamSynchronize", 0,
	  "grow on first use: queued work may still read the old staging buffer" },
	{ "trainer/backend/gpu/gpu_staging.c", "copy_and_wait", "cudaStreamSynchronize", 0,
	  "staging for blocking host collectives (broadcast, BN averaging, evaluation "
	  "gathers): the caller's host data must be complete on return" },
	{ "trainer/backend/gpu/gpu_staging.c", "gpu_staging_close", "cudaStreamSynchronize", 0,
	  "close: before freeing" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_close", "cudaStreamSynchronize", 0,
	  "close: before freeing" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_load_moments", "cudaStreamSynchronize", 0,
	  "resume: the optimizer's host buffers are pageable" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_sync_host", "cudaStreamSynchronize", 0,
	  "parameters and moments to the host before BN averaging, validation, checkpoints" },
	{ "trainer/backend/gpu/gpu_train.c", "gpu_train_stats_get", "cudaStreamSynchronize", 0,
	  "step path: the step's verdict (overflow, stop) after its allreduce decides the "
	  "optimizer step on the host" },
	{ 0 }
};

const struct audit_policy gpu_audit_policy = {
	status_text, hand_checked, unchecked, allocating, waiting,
};
