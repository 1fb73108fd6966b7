// Package native will hold c3lab's runtime-loaded NVIDIA libraries (driver
// API, cuBLASLt, NCCL, NVRTC, CUPTI) behind a narrow Go API, loaded with
// dlopen so that building needs no CUDA toolkit.
//
// It is empty in this build: the real backend arrives with issue 3, and
// until then every command runs on the simulator (backends/sim).
package native
