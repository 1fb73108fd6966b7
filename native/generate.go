package native

// The function tables of the libraries, their openers and their c3_*
// wrappers (shim_gen.h, shim_gen.c) are generated from the declaration
// table shim.api: a new NVIDIA call is one line there, then a Go method
// that calls its c3_ wrapper.
//go:generate go run ./internal/gen
