package native

import (
	"fmt"
	"unsafe"
)

// UniqueIDBytes is the size of an NCCL unique id.
const UniqueIDBytes = 128

// Bytes returns the id's bytes, for rank 0 to send to the other ranks
// (through MPI or the store).
func (u UniqueID) Bytes() []byte {
	b := make([]byte, UniqueIDBytes)
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&u.id)), UniqueIDBytes))
	return b
}

// UniqueIDFromBytes is the id another rank sent (UniqueID.Bytes).
func UniqueIDFromBytes(b []byte) (UniqueID, error) {
	var u UniqueID
	if len(b) != UniqueIDBytes {
		return u, fmt.Errorf("an NCCL unique id is %d bytes, got %d", UniqueIDBytes, len(b))
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&u.id)), UniqueIDBytes), b)
	return u, nil
}
