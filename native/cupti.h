// c3lab's CUPTI shim: the activity API for memory-copy records, opened at
// run time with dlopen (libcupti.so.13, or .12). Only the record prefix
// every CUpti_ActivityMemcpy version (3 through 7) shares is read, so the
// shim does not depend on the CUPTI release (native/ABI-NOTES.md section 5).
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
