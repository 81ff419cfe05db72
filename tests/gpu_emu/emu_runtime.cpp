/* emu_runtime.cpp - the CUDA runtime of the emulated device (make
 * GPU_EMU=1): devices, memory, streams and events with CUDA's documented
 * semantics, on the host, so that the gpu backend and comm_nccl.c run
 * unchanged and their ordering mistakes show.
 *  - Devices come from a topology: HVD_EMU_TOPOLOGY names the hwloc XML
 *    the hvd plugin was given (topology=), and its NVIDIA PCI devices
 *    (class 0300/0302, vendor 10de) in bus-id order are the node's GPUs;
 *    CUDA_VISIBLE_DEVICES then selects and orders them by index as the
 *    driver does (empty: none; an invalid entry ends the list). Without
 *    HVD_EMU_TOPOLOGY the node has one GPU, 0000:e0:00.0.
 *  - Memory: cudaMalloc'd blocks belong to the current device; cudaFree
 *    waits for all streams (as CUDA's does), refuses unknown pointers.
 *  - Streams run asynchronously, one worker thread each (emu_device.h);
 *    events complete when their stream reaches them; cudaStreamWaitEvent
 *    holds a stream until the event's last recorded work is done; a copy
 *    between host and device takes 2 ms. A copy or kernel enqueued without
 *    the wait it needs reads stale memory.
 *  - Sticky errors: work that fails poisons the context (emu_fail).
 *  - Stream capture and graphs: while a stream captures, its work is
 *    recorded, not run; cudaGraphLaunch runs the recording in order as
 *    one piece of its stream's work, every time it is launched. What
 *    CUDA refuses while a capture is on is refused here too, and breaks
 *    the capture (cudaStreamEndCapture then fails): allocating or freeing
 *    memory, a blocking copy or fill, waiting for or querying the
 *    capturing stream or an event recorded inside the capture, and the
 *    capturing stream waiting for an event recorded outside it. Only
 *    one-stream captures (no fork and join of other streams).
 * What it does not do: timing, peer access rules, unified memory, graph
 * building by nodes, more than the calls the backend and comm_nccl.c make.
 */
#include <cuda_runtime_api.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "emu_device.h"

/* --- devices --- */

namespace {

std::vector<std::string> *devices;   /* visible bus ids, CUDA order; never freed */
std::once_flag devices_once;
thread_local int current_device;
std::atomic<int> sticky{cudaSuccess};
char sticky_why[256];

std::string lower(std::string s)
{
	for (char &c : s)
		c = (char)tolower((unsigned char)c);
	return s;
}

/* The value of attribute name="..." inside one XML tag, or "". */
std::string attribute(const std::string &tag, const char *name)
{
	std::string key = std::string(" ") + name + "=\"";
	size_t at = tag.find(key);
	if (at == std::string::npos)
		return "";
	at += key.size();
	size_t end = tag.find('"', at);
	return end == std::string::npos ? "" : tag.substr(at, end - at);
}

std::vector<std::string> topology_gpus(const char *path)
{
	std::vector<std::string> gpus;
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "emulated CUDA: HVD_EMU_TOPOLOGY: '%s': cannot open\n", path);
		return gpus;
	}
	std::string xml;
	char buf[4096];
	for (size_t n; (n = fread(buf, 1, sizeof(buf), f)) > 0;)
		xml.append(buf, n);
	fclose(f);
	for (size_t at = 0; (at = xml.find("<object type=\"PCIDev\"", at)) != std::string::npos; at++) {
		std::string tag = xml.substr(at, xml.find('>', at) - at);
		std::string type = attribute(tag, "pci_type");
		if ((!type.compare(0, 4, "0302") || !type.compare(0, 4, "0300")) &&
		    type.find("[10de:") == 5)
			gpus.push_back(lower(attribute(tag, "pci_busid")));
	}
	std::sort(gpus.begin(), gpus.end());
	return gpus;
}

void load_devices(void)
{
	const char *topo = getenv("HVD_EMU_TOPOLOGY");
	std::vector<std::string> node = topo && *topo ? topology_gpus(topo)
						      : std::vector<std::string>{ "0000:e0:00.0" };
	devices = new std::vector<std::string>;
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	if (!visible) {
		*devices = node;
		return;
	}
	std::string list = visible;
	for (size_t at = 0; at <= list.size() && !list.empty();) {
		size_t end = std::min(list.find(',', at), list.size());
		std::string item = list.substr(at, end - at);
		char *stop = NULL;
		long i = strtol(item.c_str(), &stop, 10);
		if (item.empty() || *stop || i < 0 || i >= (long)node.size())
			break;   /* the driver ignores an invalid entry and all after it */
		devices->push_back(node[(size_t)i]);
		at = end + 1;
	}
}

int device_count(void)
{
	std::call_once(devices_once, load_devices);
	return (int)devices->size();
}

/* "0000:3b:00.0", "3b:00.0" or upper case: the same device. */
std::string normal_busid(const char *id)
{
	unsigned d = 0, b, s, f;
	if (sscanf(id, "%x:%x:%x.%x", &d, &b, &s, &f) != 4) {
		d = 0;
		if (sscanf(id, "%x:%x.%x", &b, &s, &f) != 3)
			return "";
	}
	char out[32];
	snprintf(out, sizeof(out), "%04x:%02x:%02x.%x", d, b, s, f);
	return out;
}

} /* namespace */

void emu_fail(cudaError_t err, const char *why)
{
	int none = cudaSuccess;
	if (sticky.compare_exchange_strong(none, (int)err)) {
		snprintf(sticky_why, sizeof(sticky_why), "%s", why);
		fprintf(stderr, "emulated CUDA: %s\n", why);
	}
}

static cudaError_t poisoned(void)
{
	return (cudaError_t)sticky.load();
}

extern "C" {

cudaError_t cudaGetDeviceCount(int *count)
{
	*count = device_count();
	return *count ? poisoned() : cudaErrorNoDevice;
}

cudaError_t cudaSetDevice(int device)
{
	if (device < 0 || device >= device_count())
		return cudaErrorInvalidDevice;
	current_device = device;
	return poisoned();
}

cudaError_t cudaGetDevice(int *device)
{
	*device = current_device;
	return poisoned();
}

cudaError_t cudaGetLastError(void) { return poisoned(); }

cudaError_t cudaRuntimeGetVersion(int *version)
{
	*version = CUDART_VERSION;   /* the headers it was built with */
	return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t error)
{
	static thread_local char text[320];
	if (error == cudaSuccess)
		return "no error";
	if (error == cudaErrorNoDevice)
		return "no CUDA-capable device is detected";
	if (error == cudaErrorInvalidDevice)
		return "invalid device ordinal";
	snprintf(text, sizeof(text), "emulated CUDA error %d%s%s", (int)error,
		 error == poisoned() ? ": " : "", error == poisoned() ? sticky_why : "");
	return text;
}

/* What the algorithm cache's key reads: an emulated device of sm 90 on
 * the toolkit's own driver version. */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	if (device < 0 || device >= device_count())
		return cudaErrorInvalidDevice;
	memset(prop, 0, sizeof(*prop));
	snprintf(prop->name, sizeof(prop->name), "emulated device");
	prop->major = 9;
	prop->minor = 0;
	return poisoned();
}

cudaError_t cudaDriverGetVersion(int *version)
{
	*version = CUDART_VERSION;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int device)
{
	if (device < 0 || device >= device_count())
		return cudaErrorInvalidDevice;
	snprintf(id, (size_t)len, "%s", (*devices)[(size_t)device].c_str());
	return cudaSuccess;
}

cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *busid)
{
	std::string want = normal_busid(busid);
	for (int i = 0; !want.empty() && i < device_count(); i++)
		if ((*devices)[(size_t)i] == want) {
			*device = i;
			return cudaSuccess;
		}
	return cudaErrorInvalidDevice;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	*total = (size_t)16 << 30;
	*free_bytes = (size_t)12 << 30;
	return poisoned();
}

} /* extern "C" */

/* --- streams --- */

struct CUstream_st {
	int device;
	std::mutex mu;
	std::condition_variable cv;
	std::deque<std::function<void()>> queue;
	bool busy = false, stop = false;
	std::thread worker;
	/* While capturing: the recorded work (cudaStreamBeginCapture). */
	std::unique_ptr<std::vector<std::function<void()>>> capture;
	bool capture_broken = false;

	void run()
	{
		std::unique_lock<std::mutex> lock(mu);
		for (;;) {
			cv.wait(lock, [&] { return stop || !queue.empty(); });
			if (queue.empty())
				return;
			std::function<void()> op = std::move(queue.front());
			queue.pop_front();
			busy = true;
			lock.unlock();
			op();
			lock.lock();
			busy = false;
			cv.notify_all();
		}
	}

	bool idle() { return queue.empty() && !busy; }

	void drain()
	{
		std::unique_lock<std::mutex> lock(mu);
		cv.wait(lock, [&] { return idle(); });
	}
};

namespace {

std::mutex device_lock;   /* the kernel emulator's shared state */
std::mutex streams_mu;
std::vector<cudaStream_t> *streams = new std::vector<cudaStream_t>;

void drain_all(void)
{
	std::lock_guard<std::mutex> hold(streams_mu);
	for (cudaStream_t s : *streams)
		s->drain();
}

void run_now(enum emu_lock lock, const std::function<void()> &op)
{
	if (lock == EMU_DEVICE_LOCK) {
		std::lock_guard<std::mutex> hold(device_lock);
		op();
	} else {
		op();
	}
}

} /* namespace */

static std::atomic<unsigned long> calls[EMU_CALL_KINDS];

static void print_calls(void)
{
	fprintf(stderr, "emu: calls: kernels %lu, cudnn %lu, cublas %lu, copies %lu, finds %lu, "
		"graphs %lu\n", calls[EMU_CALL_KERNEL].load(), calls[EMU_CALL_CUDNN].load(),
		calls[EMU_CALL_CUBLAS].load(), calls[EMU_CALL_COPY].load(),
		calls[EMU_CALL_FIND].load(), calls[EMU_CALL_GRAPH].load());
}

void emu_count(enum emu_call k)
{
	static std::once_flag once;
	std::call_once(once, [] {
		const char *v = getenv("HVD_EMU_COUNTS");
		if (v && !strcmp(v, "1"))
			atexit(print_calls);
	});
	calls[k]++;
}

void emu_enqueue(cudaStream_t s, enum emu_lock lock, std::function<void()> op)
{
	if (!s) {
		run_now(lock, op);   /* the backend makes non-blocking streams only */
		return;
	}
	std::lock_guard<std::mutex> hold(s->mu);
	if (s->capture) {
		s->capture->push_back([lock, op] { run_now(lock, op); });
		return;
	}
	s->queue.push_back([lock, op] { run_now(lock, op); });
	s->cv.notify_all();
}

/* --- what a capture refuses --- */

namespace {

std::atomic<int> captures{0};   /* streams capturing now */

bool capturing(cudaStream_t s)
{
	if (!s)
		return false;
	std::lock_guard<std::mutex> hold(s->mu);
	return s->capture != nullptr;
}

/* Every capture on now is broken by what a capture refuses (CUDA's
 * global capture mode, the one the backend uses). */
cudaError_t refused_in_capture(const char *call, cudaError_t err)
{
	fprintf(stderr, "emulated CUDA: %s during stream capture: refused, the capture is broken\n",
		call);
	std::lock_guard<std::mutex> hold(streams_mu);
	for (cudaStream_t s : *streams) {
		std::lock_guard<std::mutex> hold_s(s->mu);
		if (s->capture)
			s->capture_broken = true;
	}
	return err;
}

/* An allocation, a free or a blocking copy: refused while any stream captures. */
cudaError_t unsafe(const char *call)
{
	return captures.load() ? refused_in_capture(call, cudaErrorStreamCaptureUnsupported)
			       : cudaSuccess;
}

} /* namespace */

int emu_stream_device(cudaStream_t s)
{
	return s ? s->device : current_device;
}

/* --- memory --- */

namespace {

struct block {
	size_t bytes;
	int device;   /* -1: pinned host memory */
};
std::mutex memory_mu;
std::map<uintptr_t, block> *blocks = new std::map<uintptr_t, block>;
std::map<uintptr_t, size_t> *registered = new std::map<uintptr_t, size_t>;   /* cudaHostRegister's */

cudaError_t allocate(void **p, size_t bytes, int device)
{
	*p = NULL;
	if (posix_memalign(p, 256, bytes ? bytes : 1))
		return cudaErrorMemoryAllocation;
	memset(*p, 0xA5, bytes);  /* like device memory: not zeroed */
	std::lock_guard<std::mutex> hold(memory_mu);
	(*blocks)[(uintptr_t)*p] = block{ bytes ? bytes : 1, device };
	return poisoned();
}

cudaError_t release(void *p, bool device)
{
	if (!p)
		return cudaSuccess;
	drain_all();   /* cudaFree synchronises the device */
	{
		std::lock_guard<std::mutex> hold(memory_mu);
		auto it = blocks->find((uintptr_t)p);
		if (it == blocks->end() || (it->second.device >= 0) != device)
			return cudaErrorInvalidValue;
		blocks->erase(it);
	}
	free(p);
	return poisoned();
}

} /* namespace */

int emu_pointer_device(const void *p)
{
	std::lock_guard<std::mutex> hold(memory_mu);
	auto it = blocks->upper_bound((uintptr_t)p);
	if (it == blocks->begin())
		return -1;
	--it;
	return (uintptr_t)p < it->first + it->second.bytes ? it->second.device : -1;
}

extern "C" {

cudaError_t cudaMalloc(void **p, size_t bytes)
{
	cudaError_t err = unsafe("cudaMalloc");
	return err ? err : allocate(p, bytes, current_device);
}
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int)
{
	cudaError_t err = unsafe("cudaHostAlloc");
	return err ? err : allocate(p, bytes, -1);
}
cudaError_t cudaFree(void *p)
{
	cudaError_t err = unsafe("cudaFree");
	return err ? err : release(p, true);
}
cudaError_t cudaFreeHost(void *p)
{
	cudaError_t err = unsafe("cudaFreeHost");
	return err ? err : release(p, false);
}
/* As the driver: no pointer or no bytes is an invalid value (an H200
 * refused a layer without parameters' 0-byte registration), a range
 * overlapping one registered already is refused, and only a registered
 * start can be unregistered. */
cudaError_t cudaHostRegister(void *p, size_t bytes, unsigned int)
{
	if (!p || !bytes)
		return cudaErrorInvalidValue;
	std::lock_guard<std::mutex> hold(memory_mu);
	uintptr_t at = (uintptr_t)p;
	auto next = registered->lower_bound(at);
	if ((next != registered->end() && next->first < at + bytes) ||
	    (next != registered->begin() && std::prev(next)->first + std::prev(next)->second > at))
		return cudaErrorHostMemoryAlreadyRegistered;
	(*registered)[at] = bytes;
	return poisoned();
}
cudaError_t cudaHostUnregister(void *p)
{
	std::lock_guard<std::mutex> hold(memory_mu);
	if (!registered->erase((uintptr_t)p))
		return cudaErrorHostMemoryNotRegistered;
	return poisoned();
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind)
{
	if (cudaError_t err = unsafe("cudaMemcpy"))
		return err;
	if (bytes)  /* CUDA takes 0-byte copies of NULL (a model without parameters) */
		memmove(dst, src, bytes);
	return poisoned();
}

/* A copy between host and device lands EMU_TRANSFER_US after its stream
 * reaches it (a transfer's latency): work on another stream that does not
 * wait for it reads the memory as it was. */
#define EMU_TRANSFER_US 2000

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
			    cudaStream_t s)
{
	emu_count(EMU_CALL_COPY);
	bool transfer = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost;
	if (bytes)
		emu_enqueue(s, EMU_NO_LOCK, [=] {
			if (transfer)
				std::this_thread::sleep_for(std::chrono::microseconds(EMU_TRANSFER_US));
			memmove(dst, src, bytes);
		});
	return poisoned();
}

cudaError_t cudaMemset(void *p, int value, size_t bytes)
{
	if (cudaError_t err = unsafe("cudaMemset"))
		return err;
	if (bytes)
		memset(p, value, bytes);
	return poisoned();
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s)
{
	emu_count(EMU_CALL_COPY);
	if (bytes)
		emu_enqueue(s, EMU_NO_LOCK, [=] { memset(p, value, bytes); });
	return poisoned();
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int)
{
	cudaStream_t st = new CUstream_st();
	st->device = current_device;
	st->worker = std::thread([st] {
		st->run();
		delete st;   /* after cudaStreamDestroy: the queue is done */
	});
	std::lock_guard<std::mutex> hold(streams_mu);
	streams->push_back(st);
	*s = st;
	return poisoned();
}

/* CUDA returns at once and finishes the queued work; so does this (the
 * worker finishes the queue before it ends). */
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	if (!s)
		return cudaErrorInvalidResourceHandle;
	{
		std::lock_guard<std::mutex> hold(streams_mu);
		auto it = std::find(streams->begin(), streams->end(), s);
		if (it == streams->end())
			return cudaErrorInvalidResourceHandle;
		streams->erase(it);
	}
	std::lock_guard<std::mutex> hold(s->mu);
	s->stop = true;
	s->cv.notify_all();
	s->worker.detach();   /* the worker deletes the stream when its queue is done */
	return poisoned();
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	if (capturing(s))
		return refused_in_capture("cudaStreamSynchronize of the capturing stream",
					  cudaErrorStreamCaptureUnsupported);
	if (s)
		s->drain();
	return poisoned();
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
	if (poisoned())
		return poisoned();
	if (capturing(s))
		return refused_in_capture("cudaStreamQuery of the capturing stream",
					  cudaErrorStreamCaptureUnsupported);
	if (!s)
		return cudaSuccess;
	std::lock_guard<std::mutex> hold(s->mu);
	return s->idle() ? cudaSuccess : cudaErrorNotReady;
}

} /* extern "C" */

/* --- events --- */

namespace {

/* Shared with the work that completes it, so destroying an event whose
 * record is still queued (allowed by CUDA) frees nothing in use. */
struct event_state {
	std::mutex mu;
	std::condition_variable cv;
	unsigned long recorded = 0, completed = 0;
	cudaStream_t captured = nullptr;   /* its last record was in this stream's capture */

	void wait_for(unsigned long n)
	{
		std::unique_lock<std::mutex> lock(mu);
		cv.wait(lock, [&] { return completed >= n; });
	}
};

} /* namespace */

struct CUevent_st {
	std::shared_ptr<event_state> state = std::make_shared<event_state>();
};

namespace {

/* The stream whose capture recorded e last, or NULL. */
cudaStream_t captured_in(cudaEvent_t e)
{
	std::lock_guard<std::mutex> hold(e->state->mu);
	return e->state->captured;
}

} /* namespace */

extern "C" {

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int)
{
	*e = new CUevent_st();
	return poisoned();
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	delete e;
	return poisoned();
}

/* Inside a capture a record only orders that capture's own work, which
 * runs in order anyway: it records nothing the host or another stream
 * could wait for. */
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	std::shared_ptr<event_state> st = e->state;
	unsigned long n;
	if (capturing(s)) {
		std::lock_guard<std::mutex> hold(st->mu);
		st->captured = s;
		return poisoned();
	}
	{
		std::lock_guard<std::mutex> hold(st->mu);
		st->captured = nullptr;
		n = ++st->recorded;
	}
	emu_enqueue(s, EMU_NO_LOCK, [st, n] {
		std::lock_guard<std::mutex> hold(st->mu);
		st->completed = std::max(st->completed, n);
		st->cv.notify_all();
	});
	return poisoned();
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
	if (captured_in(e))
		return refused_in_capture("cudaEventQuery of an event recorded in a capture",
					  cudaErrorCapturedEvent);
	std::lock_guard<std::mutex> hold(e->state->mu);
	if (poisoned())
		return poisoned();
	return e->state->completed >= e->state->recorded ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	if (captured_in(e))
		return refused_in_capture("cudaEventSynchronize of an event recorded in a capture",
					  cudaErrorCapturedEvent);
	unsigned long n;
	{
		std::lock_guard<std::mutex> hold(e->state->mu);
		n = e->state->recorded;
	}
	e->state->wait_for(n);
	return poisoned();
}

/* The stream waits for the work the event's latest record captured (at
 * this call, as CUDA documents); later records do not move it. A
 * capturing stream may wait only for its own capture's records (a
 * no-op: its work runs in order); waiting for work outside the capture,
 * or another stream waiting for a captured record (CUDA's join of a
 * second stream into the capture, not emulated), is refused. */
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int)
{
	std::shared_ptr<event_state> st = e->state;
	unsigned long n;
	cudaStream_t in = captured_in(e);
	if (in)
		return in == s ? poisoned()
			       : refused_in_capture("cudaStreamWaitEvent for an event recorded in "
						    "another stream's capture",
						    cudaErrorStreamCaptureIsolation);
	{
		std::lock_guard<std::mutex> hold(st->mu);
		n = st->recorded;
	}
	if (n && capturing(s))
		return refused_in_capture("cudaStreamWaitEvent of a capturing stream for work "
					  "outside the capture", cudaErrorStreamCaptureIsolation);
	if (n)
		emu_enqueue(s, EMU_NO_LOCK, [st, n] { st->wait_for(n); });
	return poisoned();
}

/* --- stream capture and graphs --- */

} /* extern "C" */

struct CUgraph_st {
	std::vector<std::function<void()>> work;
};

struct CUgraphExec_st {
	std::shared_ptr<const std::vector<std::function<void()>>> work;
};

extern "C" {

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode)
{
	if (!s)
		return cudaErrorStreamCaptureUnsupported;
	std::lock_guard<std::mutex> hold(s->mu);
	if (s->capture)
		return cudaErrorIllegalState;
	s->capture.reset(new std::vector<std::function<void()>>);
	s->capture_broken = false;
	captures++;
	return poisoned();
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph)
{
	*graph = nullptr;
	if (!s)
		return cudaErrorIllegalState;
	std::unique_ptr<std::vector<std::function<void()>>> work;
	bool broken;
	{
		std::lock_guard<std::mutex> hold(s->mu);
		if (!s->capture)
			return cudaErrorIllegalState;
		work = std::move(s->capture);
		broken = s->capture_broken;
	}
	captures--;
	if (broken)
		return cudaErrorStreamCaptureInvalidated;
	*graph = new CUgraph_st{ std::move(*work) };
	return poisoned();
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
	*status = capturing(s) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
	return poisoned();
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long)
{
	if (!graph)
		return cudaErrorInvalidValue;
	*exec = new CUgraphExec_st{
		std::make_shared<const std::vector<std::function<void()>>>(graph->work) };
	return poisoned();
}

/* The whole recording, in order, as one piece of the stream's work. */
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
	if (!exec)
		return cudaErrorInvalidValue;
	if (capturing(s))
		return refused_in_capture("cudaGraphLaunch into a capture (not emulated)",
					  cudaErrorStreamCaptureUnsupported);
	emu_count(EMU_CALL_GRAPH);
	std::shared_ptr<const std::vector<std::function<void()>>> work = exec->work;
	emu_enqueue(s, EMU_NO_LOCK, [work] {
		for (const std::function<void()> &op : *work)
			op();
	});
	return poisoned();
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
	delete exec;   /* a launch still queued holds its own reference */
	return poisoned();
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	delete graph;
	return poisoned();
}

} /* extern "C" */
