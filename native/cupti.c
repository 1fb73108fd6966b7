// See cupti.h. CUPTI hands activity buffers to callbacks that carry no user
// pointer, so the loaded library and the record queue are process-wide
// state here, guarded by a mutex (CUPTI calls the completion callback on
// its own thread).
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti.h"
#include "dl.h"

#define KIND_MEMCPY 1        // CUPTI_ACTIVITY_KIND_MEMCPY
#define KIND_MEMCPY_P2P 22   // CUPTI_ACTIVITY_KIND_MEMCPY2: peer-to-peer copies
#define KIND_KERNEL 3        // CUPTI_ACTIVITY_KIND_KERNEL (serialized; c3lab enables the next)
#define KIND_CONCURRENT_KERNEL 10
#define QUEUE_KERNELS (1 << 13)
#define CUPTI_SUCCESS 0
#define CUPTI_MAX_RECORDS 2  // CUPTI_ERROR_MAX_LIMIT_REACHED: end of buffer
#define BUFFER_BYTES (1 << 20)
#define QUEUE_RECORDS (1 << 16)

typedef void (*requested_fn)(uint8_t **, size_t *, size_t *);
typedef void (*completed_fn)(void *, uint32_t, uint8_t *, size_t, size_t);

static struct {
	void *handle;
	int (*enable)(int);
	int (*disable)(int);
	int (*register_callbacks)(requested_fn, completed_fn);
	int (*flush_all)(uint32_t);
	int (*next_record)(uint8_t *, size_t, void **);
	int (*timestamp)(uint64_t *);
	pthread_mutex_t mu;
	c3_copy_record queue[QUEUE_RECORDS];
	int head, count;
	c3_kernel_record kernels[QUEUE_KERNELS];
	int khead, kcount;
	int copies_on, kernels_on;
	uint64_t dropped;
} cupti = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void on_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
	*buffer = aligned_alloc(8, BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;
	*max_records = 0;
}

// The prefix of every CUpti_ActivityMemcpy and CUpti_ActivityMemcpyPtoP
// version (ABI-NOTES 5): kind (4 bytes), copyKind, srcKind, dstKind, flags
// (1 byte each), bytes, start, end (8 bytes each), deviceId, contextId,
// streamId, correlationId (4 bytes each). Only its offsets are used: a
// record is read byte by byte. Peer-to-peer copies come only as MEMCPY2
// records.
typedef struct {
	uint32_t kind;
	uint8_t copyKind, srcKind, dstKind, flags;
	uint64_t bytes, start, end;
	uint32_t deviceId, contextId, streamId;
	uint32_t correlationId; // srcDeviceId in a MEMCPY2 record
} memcpy_prefix;
_Static_assert(offsetof(memcpy_prefix, kind) == 0, "memcpy record: kind at 0 (ABI-NOTES 5)");
_Static_assert(offsetof(memcpy_prefix, copyKind) == 4, "memcpy record: copyKind at 4 (ABI-NOTES 5)");
_Static_assert(offsetof(memcpy_prefix, srcKind) == 5 && offsetof(memcpy_prefix, flags) == 7,
               "memcpy record: srcKind, dstKind, flags at 5, 6, 7 (ABI-NOTES 5)");
_Static_assert(offsetof(memcpy_prefix, bytes) == 8, "memcpy record: bytes at 8 (ABI-NOTES 5)");
_Static_assert(offsetof(memcpy_prefix, start) == 16, "memcpy record: start at 16 (ABI-NOTES 5)");
_Static_assert(offsetof(memcpy_prefix, end) == 24, "memcpy record: end at 24 (ABI-NOTES 5)");
_Static_assert(offsetof(memcpy_prefix, deviceId) == 32, "memcpy record: deviceId at 32 (ABI-NOTES 5)");
_Static_assert(offsetof(memcpy_prefix, contextId) == 36, "memcpy record: contextId at 36 (ABI-NOTES 5)");
_Static_assert(offsetof(memcpy_prefix, streamId) == 40, "memcpy record: streamId at 40 (ABI-NOTES 5)");
_Static_assert(offsetof(memcpy_prefix, correlationId) == 44, "memcpy record: correlationId at 44 (ABI-NOTES 5)");

#define FIELD(r, f) ((r) + offsetof(memcpy_prefix, f))

// The prefix every CUpti_ActivityKernel version from 4 (CUDA 9) through
// the CUDA 13 ones shares (ABI-NOTES 5.1): kind, cache and shared-memory
// configuration bytes, registers per thread, two partitioned-cache enums,
// start, end, completed, device, context and stream ids, grid and block
// dimensions, static and dynamic shared memory, local memory per thread
// and in all, correlation id, grid id and the name's pointer. Read byte
// by byte at these offsets, as the memcpy records are.
typedef struct {
	uint32_t kind;
	uint8_t cacheConfig, sharedMemoryConfig;
	uint16_t registersPerThread;
	uint32_t partitionedRequested, partitionedExecuted;
	uint64_t start, end, completed;
	uint32_t deviceId, contextId, streamId;
	int32_t grid[3], block[3];
	int32_t staticSharedMemory, dynamicSharedMemory;
	uint32_t localMemoryPerThread, localMemoryTotal, correlationId;
	int64_t gridId;
	const char *name;
} kernel_prefix;
_Static_assert(offsetof(kernel_prefix, registersPerThread) == 6, "kernel record: registersPerThread at 6 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, start) == 16, "kernel record: start at 16 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, end) == 24, "kernel record: end at 24 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, deviceId) == 40, "kernel record: deviceId at 40 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, streamId) == 48, "kernel record: streamId at 48 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, grid) == 52, "kernel record: gridX at 52 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, block) == 64, "kernel record: blockX at 64 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, staticSharedMemory) == 76, "kernel record: staticSharedMemory at 76 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, dynamicSharedMemory) == 80, "kernel record: dynamicSharedMemory at 80 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, gridId) == 96, "kernel record: gridId at 96 (ABI-NOTES 5.1)");
_Static_assert(offsetof(kernel_prefix, name) == 104, "kernel record: name at 104 (ABI-NOTES 5.1)");

#define KFIELD(r, f) ((r) + offsetof(kernel_prefix, f))

int c3_cupti_parse_kernel(const uint8_t *r, c3_kernel_record *k) {
	uint32_t kind;
	memcpy(&kind, KFIELD(r, kind), 4);
	if (kind != KIND_CONCURRENT_KERNEL && kind != KIND_KERNEL) return -1;
	memset(k, 0, sizeof *k);
	memcpy(&k->registers, KFIELD(r, registersPerThread), 2);
	memcpy(&k->start, KFIELD(r, start), 8);
	memcpy(&k->end, KFIELD(r, end), 8);
	memcpy(&k->device, KFIELD(r, deviceId), 4);
	memcpy(&k->stream, KFIELD(r, streamId), 4);
	memcpy(k->grid, KFIELD(r, grid), 12);
	memcpy(k->block, KFIELD(r, block), 12);
	memcpy(&k->static_shared, KFIELD(r, staticSharedMemory), 4);
	memcpy(&k->dynamic_shared, KFIELD(r, dynamicSharedMemory), 4);
	const char *name = NULL;
	memcpy(&name, KFIELD(r, name), sizeof name);
	if (name) {
		strncpy(k->name, name, C3_KERNEL_NAME_BYTES - 1);
		k->name[C3_KERNEL_NAME_BYTES - 1] = 0;
	}
	return 0;
}

static void take_kernel(const uint8_t *r) {
	c3_kernel_record k;
	if (c3_cupti_parse_kernel(r, &k) != 0) return;
	pthread_mutex_lock(&cupti.mu);
	if (cupti.kcount == QUEUE_KERNELS) {
		cupti.dropped++;
	} else {
		cupti.kernels[(cupti.khead + cupti.kcount) % QUEUE_KERNELS] = k;
		cupti.kcount++;
	}
	pthread_mutex_unlock(&cupti.mu);
}

static void take_record(const uint8_t *r) {
	uint32_t kind;
	memcpy(&kind, FIELD(r, kind), 4);
	if (kind == KIND_CONCURRENT_KERNEL || kind == KIND_KERNEL) {
		take_kernel(r);
		return;
	}
	if (kind != KIND_MEMCPY && kind != KIND_MEMCPY_P2P) return;
	c3_copy_record c;
	c.copy_kind = *FIELD(r, copyKind);
	memcpy(&c.bytes, FIELD(r, bytes), 8);
	memcpy(&c.start, FIELD(r, start), 8);
	memcpy(&c.end, FIELD(r, end), 8);
	memcpy(&c.device, FIELD(r, deviceId), 4);
	memcpy(&c.stream, FIELD(r, streamId), 4);
	pthread_mutex_lock(&cupti.mu);
	if (cupti.count == QUEUE_RECORDS) {
		cupti.dropped++;
	} else {
		cupti.queue[(cupti.head + cupti.count) % QUEUE_RECORDS] = c;
		cupti.count++;
	}
	pthread_mutex_unlock(&cupti.mu);
}

static void on_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
	(void)ctx, (void)stream, (void)size;
	void *record = NULL;
	while (cupti.next_record && cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) take_record(record);
	free(buffer);
}

static const char *const cupti_names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so", NULL};

// unload closes a half-loaded libcupti and clears every pointer into it, so
// none stays usable and the next start loads each symbol afresh (SYM skips
// a field that is already set).
static void unload(void) {
	if (cupti.handle) dlclose(cupti.handle);
	cupti.handle = NULL;
	cupti.enable = NULL;
	cupti.disable = NULL;
	cupti.register_callbacks = NULL;
	cupti.flush_all = NULL;
	cupti.next_record = NULL;
	cupti.timestamp = NULL;
	cupti.copies_on = 0;
	cupti.kernels_on = 0;
}

// load opens libcupti and loads its symbols; on failure SYM has closed it.
static int load(char *err, size_t errlen) {
	if (!(cupti.handle = c3_open_first(cupti_names, err, errlen))) return -1;
	SYM(&cupti, enable, "cuptiActivityEnable");
	SYM(&cupti, disable, "cuptiActivityDisable");
	SYM(&cupti, register_callbacks, "cuptiActivityRegisterCallbacks");
	SYM(&cupti, flush_all, "cuptiActivityFlushAll");
	SYM(&cupti, next_record, "cuptiActivityGetNextRecord");
	SYM(&cupti, timestamp, "cuptiGetTimestamp");
	return 0;
}

// enable_copies turns on both memcpy kinds, or neither.
static int enable_copies(void) {
	int rc = cupti.enable(KIND_MEMCPY);
	if (rc == CUPTI_SUCCESS) {
		rc = cupti.enable(KIND_MEMCPY_P2P);
		if (rc != CUPTI_SUCCESS) cupti.disable(KIND_MEMCPY);
	}
	if (rc == CUPTI_SUCCESS) cupti.copies_on = 1;
	return rc;
}

// A start after a stop (the library stays loaded for the process) turns
// the memcpy records on again; the first loads the library.
int c3_cupti_start(char *err, size_t errlen) {
	if (cupti.handle) {
		int rc = cupti.copies_on ? CUPTI_SUCCESS : enable_copies();
		if (rc != CUPTI_SUCCESS) {
			snprintf(err, errlen, "CUPTI error %d enabling memory-copy records again", rc);
			return -1;
		}
		return 0;
	}
	unload(); // no pointer of an earlier, failed start survives
	if (load(err, errlen) != 0) {
		unload();
		return -1;
	}
	int rc = cupti.register_callbacks(on_requested, on_completed);
	// Nothing may keep recording into a library about to close: enable_copies
	// leaves neither kind on when it fails.
	if (rc == CUPTI_SUCCESS) rc = enable_copies();
	if (rc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "CUPTI error %d enabling memory-copy records", rc);
		unload();
		return -1;
	}
	return 0;
}

// Flag 1 is CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: deliver buffers that are not full.
int c3_cupti_probe(char *err, size_t errlen, uint32_t *version) {
	void *h = c3_open_first(cupti_names, err, errlen);
	if (!h) return -1;
	static const char *const syms[] = {"cuptiActivityEnable", "cuptiActivityRegisterCallbacks", "cuptiActivityGetNextRecord", NULL};
	for (int i = 0; syms[i]; i++) {
		if (!dlsym(h, syms[i])) {
			snprintf(err, errlen, "symbol %s missing", syms[i]);
			dlclose(h);
			return -1;
		}
	}
	*version = 0;
	int (*get_version)(uint32_t *) = (int (*)(uint32_t *))dlsym(h, "cuptiGetVersion");
	if (get_version && get_version(version) != CUPTI_SUCCESS) *version = 0;
	dlclose(h);
	return 0;
}

int c3_cupti_flush(void) { return cupti.handle ? cupti.flush_all(1) : 0; }

int c3_cupti_take(c3_copy_record *out, int max) {
	pthread_mutex_lock(&cupti.mu);
	int n = cupti.count < max ? cupti.count : max;
	for (int i = 0; i < n; i++) out[i] = cupti.queue[(cupti.head + i) % QUEUE_RECORDS];
	cupti.head = (cupti.head + n) % QUEUE_RECORDS;
	cupti.count -= n;
	pthread_mutex_unlock(&cupti.mu);
	return n;
}

int c3_cupti_enable_kernels(char *err, size_t errlen) {
	if (!cupti.handle) {
		snprintf(err, errlen, "CUPTI is not started");
		return -1;
	}
	if (cupti.kernels_on) return 0;
	int rc = cupti.enable(KIND_CONCURRENT_KERNEL);
	if (rc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "CUPTI error %d enabling kernel records", rc);
		return -1;
	}
	cupti.kernels_on = 1;
	return 0;
}

int c3_cupti_take_kernels(c3_kernel_record *out, int max) {
	pthread_mutex_lock(&cupti.mu);
	int n = cupti.kcount < max ? cupti.kcount : max;
	for (int i = 0; i < n; i++) out[i] = cupti.kernels[(cupti.khead + i) % QUEUE_KERNELS];
	cupti.khead = (cupti.khead + n) % QUEUE_KERNELS;
	cupti.kcount -= n;
	pthread_mutex_unlock(&cupti.mu);
	return n;
}

uint64_t c3_cupti_dropped(void) {
	pthread_mutex_lock(&cupti.mu);
	uint64_t d = cupti.dropped;
	pthread_mutex_unlock(&cupti.mu);
	return d;
}

uint64_t c3_cupti_now(void) {
	uint64_t t = 0;
	if (cupti.handle) cupti.timestamp(&t);
	return t;
}

void c3_cupti_stop(void) {
	if (!cupti.handle) return;
	if (cupti.copies_on) {
		cupti.disable(KIND_MEMCPY);
		cupti.disable(KIND_MEMCPY_P2P);
	}
	if (cupti.kernels_on) cupti.disable(KIND_CONCURRENT_KERNEL);
	cupti.copies_on = cupti.kernels_on = 0;
	cupti.flush_all(1);
}

int c3_cupti_pointers_set(void) {
	return !!cupti.handle + !!cupti.enable + !!cupti.disable + !!cupti.register_callbacks + !!cupti.flush_all +
	       !!cupti.next_record + !!cupti.timestamp;
}
