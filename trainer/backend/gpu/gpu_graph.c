/* gpu_graph.c - the training step as one CUDA graph (--cuda-graph on):
 * the one place that decides when a step is captured and when replayed.
 * A step's work is keyed by its image slot (the input upload alternates
 * between two device buffers) and its shape (batch, loss weights): a
 * shape's first step runs uncaptured, each slot's next is captured on the
 * compute stream (global capture mode: no allocation, no host wait and no
 * other stream may enter) and launched, later steps launch the graph.
 * The graph holds pointers into the pool and into gpu_train's buffers;
 * what changes from step to step (pixels, labels, the optimizer's
 * values) it reads from pinned host memory or device memory written
 * before each launch.
 * What it does not do: decide which work a step is (gpu_step.c), stage
 * host data (gpu_input.c, gpu_loss.c, gpu_train.c) or NCCL (one rank).
 */
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

static void drop_one(struct gpu_step_graph *g)
{
	if (g->exec)
		cudaGraphExecDestroy(g->exec);
	*g = (struct gpu_step_graph){ 0 };
}

void gpu_graph_drop(struct backend *b)
{
	for (int s = 0; s < 2; s++)
		drop_one(&b->step_graph[s]);
	b->warmed = (struct gpu_step_graph){ 0 };
}

static int instantiate(struct gpu_step_graph *g, cudaGraph_t graph, struct trainer_error *err)
{
	GPU_CUDA(cudaGraphInstantiate(&g->exec, graph, 0));
	return 0;
}

/* queue's work recorded on the compute stream and made g's graph. A
 * failed queue ends the capture and says its own error. */
static int capture(struct backend *b, struct gpu_step_graph *g,
		   int (*queue)(void *ctx, struct trainer_error *err), void *ctx,
		   struct trainer_error *err)
{
	cudaGraph_t graph = NULL;

	GPU_CUDA(cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeGlobal));
	if (queue(ctx, err)) {
		cudaStreamEndCapture(b->stream, &graph);
		if (graph)
			cudaGraphDestroy(graph);
		return -1;
	}
	GPU_CUDA(cudaStreamEndCapture(b->stream, &graph));
	int rc = instantiate(g, graph, err);
	cudaGraphDestroy(graph);
	return rc;
}

int gpu_graph_run(struct backend *b, int (*queue)(void *ctx, struct trainer_error *err),
		  void *ctx, struct trainer_error *err)
{
	struct gpu_step_graph *g = &b->step_graph[b->step_slot];
	struct gpu_step_graph shape = { NULL, b->count, b->loss_weights };

	if (g->exec && (g->count != shape.count || g->weights != shape.weights))
		drop_one(g);
	if (b->warmed.count != shape.count || b->warmed.weights != shape.weights) {
		b->warmed = shape;
		return queue(ctx, err);
	}
	if (!g->exec) {
		*g = shape;
		if (capture(b, g, queue, ctx, err))
			return -1;
	}
	gpu_launch_note(GPU_LAUNCH_GRAPH);
	GPU_CUDA(cudaGraphLaunch(g->exec, b->stream));
	return 0;
}
