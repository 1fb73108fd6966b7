// c3lab's CUPTI shim: the activity API for memory-copy and kernel records,
// opened at run time with dlopen (libcupti.so.13, or .12). Only the record
// prefixes every CUpti_ActivityMemcpy version (3 through 7) and every
// CUpti_ActivityKernel version from 4 share are read, so the shim does not
// depend on the CUPTI release (native/ABI-NOTES.md sections 5 and 5.1).
#ifndef C3_CUPTI_H
#define C3_CUPTI_H

#include <stddef.h>
#include <stdint.h>

// One memory copy as CUPTI reported it.
typedef struct {
	uint64_t bytes, start, end; // start and end on CUPTI's clock, in ns
	uint32_t device, stream;
	uint8_t copy_kind; // CUpti_ActivityMemcpyKind: 8 = device to device, 10 = peer to peer
} c3_copy_record;

// C3_KERNEL_NAME_BYTES bounds a kernel record's copy of the kernel's name
// (cut short, NUL-terminated).
#define C3_KERNEL_NAME_BYTES 160

// One kernel execution as CUPTI reported it (CONCURRENT_KERNEL records).
typedef struct {
	uint64_t start, end; // on CUPTI's clock, in ns
	uint32_t device, stream;
	int32_t grid[3], block[3];
	int32_t static_shared, dynamic_shared; // bytes per CTA
	uint16_t registers;                    // per thread
	char name[C3_KERNEL_NAME_BYTES];
} c3_kernel_record;

// c3_cupti_start loads CUPTI, registers the buffer callbacks and enables
// MEMCPY records. It returns 0, or writes what failed into err and returns -1.
int c3_cupti_start(char *err, size_t errlen);
// c3_cupti_probe checks that CUPTI loads, without enabling anything, and
// reads its API version (cuptiGetVersion; 0 when unknown).
int c3_cupti_probe(char *err, size_t errlen, uint32_t *version);
// c3_cupti_flush delivers every completed record to the queue.
int c3_cupti_flush(void);
// c3_cupti_take moves up to max queued records into out and returns how many.
int c3_cupti_take(c3_copy_record *out, int max);
// c3_cupti_enable_kernels enables CONCURRENT_KERNEL records after a
// successful start. It returns 0, or writes what failed into err and
// returns -1.
int c3_cupti_enable_kernels(char *err, size_t errlen);
// c3_cupti_take_kernels moves up to max queued kernel records into out and
// returns how many.
int c3_cupti_take_kernels(c3_kernel_record *out, int max);
// c3_cupti_parse_kernel reads one CUpti_ActivityKernel record's prefix
// (ABI-NOTES 5.1) into out; 0, or -1 when it is no kernel record.
int c3_cupti_parse_kernel(const uint8_t *record, c3_kernel_record *out);
// c3_cupti_dropped counts records lost because the queue was full.
uint64_t c3_cupti_dropped(void);
// c3_cupti_now is CUPTI's current timestamp in ns.
uint64_t c3_cupti_now(void);
// c3_cupti_stop disables the records and flushes what is left.
void c3_cupti_stop(void);
// c3_cupti_pointers_set counts the function pointers into libcupti that
// are set, the library's handle included (0 unless a start succeeded).
int c3_cupti_pointers_set(void);

#endif
