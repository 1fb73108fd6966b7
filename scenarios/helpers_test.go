package scenarios

// h200Memory is an H200's device memory as its driver reports it (and
// the simulator models it).
const h200Memory = 150109880320

// h200 returns the limits of an NVIDIA H200, as the CUDA backend and the
// simulator report them.
func h200() Limits {
	return Limits{
		Device:          "NVIDIA H200",
		SMs:             132,
		SMStep:          8,
		MaxGPUs:         8,
		CopyEngines:     3,
		HighestPriority: -5,
		DTypes:          []DType{BF16, FP16, FP8, FP32},
		MemoryBytes:     h200Memory,
	}
}
