package scenarios

import (
	"flag"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Capability is something a backend must be able to do to apply a knob's
// setting, as a verb phrase that completes "the backend cannot ...": "set
// stream priorities". A backend lists the ones it has
// (backends.Capabilities.Has); a strategy that needs one it lacks is
// refused, naming the knob, never silently ignored.
//
// The phrase is the key: one string says what a backend declares, what
// the profiler checks and what the lab and the CLI tell a user.
type Capability string

// The capabilities c3lab's knobs need.
const (
	CapPriority       Capability = "set stream priorities"
	CapSMPartition    Capability = "partition SMs"
	CapCommCTACap     Capability = "cap the collective's CTAs"
	CapGEMMSMTarget   Capability = "size a GEMM for fewer SMs"
	CapDMA            Capability = "run collectives on copy engines"
	CapNCCLCopyEngine Capability = "run NCCL's copy-engine collectives"
	CapDecompose      Capability = "decompose dependent pairs into chunks"
	// CapPeerLoad is comm_engine p2p-load: a reduction kernel that loads
	// the peers' blocks over NVLink, which needs peer access between
	// every pair of GPUs.
	CapPeerLoad Capability = "load the peers' blocks over NVLink in a reduction kernel"
)

// Knob is one strategy knob: its name in every place c3lab shows or reads
// it (YAML and JSON key, command-line flag, the lab's keys), its
// validation, the capability a backend needs to apply it and how it
// prints. Flags, scenario files, validation, the profiler's refusal of a
// knob a backend lacks, the lab's knob keys and help and the README's
// strategy-flag list are all derived from the table (Knobs); adding a knob
// is a field of Strategy, one entry and the backends' code that applies it.
type Knob struct {
	// Key is the knob's field in a strategy's YAML and JSON ("comm_priority").
	Key string
	// Flag is the command-line flag that sets it ("comm-priority") and
	// Usage the flag's help.
	Flag, Usage string
	// Examples are values of the flag that set the knob (the first is the
	// one the README shows); tests walk every one on every backend. Base
	// is the rest of the strategy they need (copy_engines needs
	// comm_engine dma).
	Examples []string
	Base     Strategy
	// Value points at the knob's setting in s: an *int, a *ByteSize or a
	// pointer to a string type (*LaunchOrder, *CommEngine).
	Value func(s *Strategy) any
	// Needs is the capability a backend needs to apply s's setting of the
	// knob; "" when any backend applies it (the knob's default needs none).
	Needs func(s Strategy) Capability
	// Check validates the knob's setting in s (normalized) against the
	// device limits. Each message is about the knob's own field and says
	// what is allowed after "; ".
	Check func(s Strategy, lim Limits) []string
	// Show is the knob's part of Strategy.String ("prio=-5"); "" leaves
	// it out (at the knob's default).
	Show func(s Strategy) string
	// Setting is the knob's current value in words, as the lab's help
	// shows it ("8 of 132", "library default").
	Setting func(s Strategy, lim Limits) string
	// Keys are the lab's keys that turn the knob (none: the lab leaves it
	// to scenario files and flags).
	Keys []KnobKey
}

// KnobKey is a key of the lab that turns a knob.
type KnobKey struct {
	// Action names the key in the lab's key file ("priority"); Key is its
	// default key ("p").
	Action, Key string
	// Help describes what the key does, for the help overlay.
	Help func(lim Limits) string
	// Needs is what a backend must be able to do for the key to turn the
	// knob on.
	Needs Capability
	// Usable reports whether the device leaves the key anything to turn
	// (nil: always): one stream priority, or one copy engine, leaves none.
	Usable func(lim Limits) bool
}

// Knobs is a table of strategy knobs, in the order they print.
type Knobs []Knob

// Find returns the knob whose YAML key is key.
func (ks Knobs) Find(key string) (Knob, bool) {
	for _, k := range ks {
		if k.Key == key {
			return k, true
		}
	}
	return Knob{}, false
}

// Keys lists the knobs' YAML keys, in table order.
func (ks Knobs) Keys() []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Key
	}
	return out
}

// ValidateStrategy checks a strategy against the device limits, knob by
// knob. Paths are relative to the strategy ("$.comm_sms").
func (ks Knobs) ValidateStrategy(s Strategy, lim Limits) []FieldError {
	s = s.Normalize()
	var errs []FieldError
	for _, k := range ks {
		for _, msg := range k.Check(s, lim) {
			errs = append(errs, FieldError{Path: "$." + k.Key, Msg: msg})
		}
	}
	return errs
}

// Format is the compact one-line summary of Strategy.String under this
// table: the knobs that differ from plain C3, or "baseline".
func (ks Knobs) Format(s Strategy) string {
	s = s.Normalize()
	var parts []string
	for _, k := range ks {
		if p := k.Show(s); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "baseline"
	}
	return strings.Join(parts, " ")
}

// KnobNeed is a capability a strategy needs, and the knob that needs it.
type KnobNeed struct {
	Knob Knob
	Cap  Capability
}

// Needs lists what a backend must be able to do to apply s, knob by knob
// in table order.
func (ks Knobs) Needs(s Strategy) []KnobNeed {
	s = s.Normalize()
	var out []KnobNeed
	for _, k := range ks {
		if c := k.Needs(s); c != "" {
			out = append(out, KnobNeed{k, c})
		}
	}
	return out
}

// Text is the knob's setting in s as a flag or YAML value ("-5", "dma").
func (k Knob) Text(s Strategy) string {
	switch v := k.Value(&s).(type) {
	case *int:
		return strconv.Itoa(*v)
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(reflect.ValueOf(k.Value(&s)).Elem().Interface())
}

// Set parses text as the knob's value into s, as its flag does.
func (k Knob) Set(s *Strategy, text string) error {
	switch v := k.Value(s).(type) {
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%s %q is not a whole number", k.Key, text)
		}
		*v = n
		return nil
	case flag.Value:
		return v.Set(text)
	}
	p := reflect.ValueOf(k.Value(s))
	if p.Kind() != reflect.Pointer || p.Elem().Kind() != reflect.String {
		return fmt.Errorf("knob %s has an unsupported value type %s; this is a c3lab bug", k.Key, p.Type())
	}
	p.Elem().SetString(text)
	return nil
}

// Copy sets the knob in dst to its setting in src.
func (k Knob) Copy(dst *Strategy, src Strategy) {
	reflect.ValueOf(k.Value(dst)).Elem().Set(reflect.ValueOf(k.Value(&src)).Elem())
}

// Example returns the strategy that sets the knob to its i-th example on
// top of Base, or an error when there is no such example or it does not
// parse.
func (k Knob) Example(i int) (Strategy, error) {
	st := k.Base
	if i < 0 || i >= len(k.Examples) {
		return st, fmt.Errorf("knob %s has no example %d", k.Key, i)
	}
	err := k.Set(&st, k.Examples[i])
	return st, err
}

// StrategyKnobs returns c3lab's knob table. ValidateStrategy and
// Strategy.String read it; so do the CLI's flags, the profiler's refusal
// of a knob a backend lacks and the lab's keys and help.
func StrategyKnobs() Knobs {
	none := func(Strategy) Capability { return "" }
	needIf := func(c Capability, set func(Strategy) bool) func(Strategy) Capability {
		return func(s Strategy) Capability {
			if set(s) {
				return c
			}
			return ""
		}
	}
	showInt := func(format string, v func(Strategy) int) func(Strategy) string {
		return func(s Strategy) string {
			if v(s) == 0 {
				return ""
			}
			return fmt.Sprintf(format, v(s))
		}
	}
	// dmaOnly checks a knob that applies only to copy-engine collectives.
	dmaOnly := func(key string, set func(Strategy) bool, check func(Strategy, Limits) []string) func(Strategy, Limits) []string {
		return func(s Strategy, lim Limits) []string {
			switch s.CommEngine {
			case EngineSM, EngineNCCLCE, EngineP2PLoad:
				// Reported at the field that is set, which is in the
				// file; comm_engine may well be absent (sm is the default).
				if set(s) {
					return []string{fmt.Sprintf("%s applies only with comm_engine: dma; set comm_engine: dma or remove %s", key, key)}
				}
			case EngineDMA:
				return check(s, lim)
			}
			return nil
		}
	}
	smsStep := func(lim Limits) string {
		if lim.SMStep > 0 {
			return fmt.Sprintf("%d SMs", lim.SMStep)
		}
		return "a step"
	}
	return Knobs{
		{
			Key: "launch", Flag: "launch", Usage: "launch order: compute-first (plain C3) or comm-first",
			Examples: []string{string(CommFirst)},
			Value:    func(s *Strategy) any { return &s.Launch },
			Needs:    none,
			Check: func(s Strategy, _ Limits) []string {
				if s.Launch != ComputeFirst && s.Launch != CommFirst {
					return []string{fmt.Sprintf("launch %q is unknown; allowed compute-first, comm-first", s.Launch)}
				}
				return nil
			},
			Show: func(s Strategy) string {
				if s.Launch == ComputeFirst {
					return ""
				}
				return string(s.Launch)
			},
			Setting: func(s Strategy, _ Limits) string { return string(s.Launch) },
			Keys: []KnobKey{{Action: "launch", Key: "o",
				Help: func(Limits) string { return "launch order: compute-first / comm-first" }}},
		},
		{
			Key: "comm_priority", Flag: "comm-priority",
			Usage:    "comm stream priority, CUDA convention: 0 lowest .. the device's highest, a negative number",
			Examples: []string{"-5"},
			Value:    func(s *Strategy) any { return &s.CommPriority },
			Needs:    needIf(CapPriority, func(s Strategy) bool { return s.CommPriority != 0 }),
			Check: func(s Strategy, lim Limits) []string {
				if s.CommPriority > 0 || s.CommPriority < lim.HighestPriority {
					return []string{fmt.Sprintf("comm_priority is %d; allowed %d (highest) .. 0 (lowest) on %s", s.CommPriority, lim.HighestPriority, lim.Device)}
				}
				return nil
			},
			Show:    showInt("prio=%d", func(s Strategy) int { return s.CommPriority }),
			Setting: func(s Strategy, _ Limits) string { return strconv.Itoa(s.CommPriority) },
			Keys: []KnobKey{{Action: "priority", Key: "p", Needs: CapPriority,
				Help:   func(lim Limits) string { return fmt.Sprintf("comm stream priority: 0 / %d", lim.HighestPriority) },
				Usable: func(lim Limits) bool { return lim.HighestPriority < 0 }}},
		},
		{
			Key: "comm_sms", Flag: "comm-sms",
			Usage:    "confine the collective to an SM partition of this size (in the device's partition steps); 0 = none",
			Examples: []string{"32"},
			Value:    func(s *Strategy) any { return &s.CommSMs },
			Needs:    needIf(CapSMPartition, func(s Strategy) bool { return s.CommSMs != 0 }),
			Check: func(s Strategy, lim Limits) []string {
				// comm_sms may also be exactly what compute_sms leaves: the
				// compute op then gets an aligned partition and the
				// collective the rest of the split, whatever its size.
				if s.ComputeSMs > 0 && s.CommSMs > 0 && s.CommSMs+s.ComputeSMs == lim.SMs {
					return nil
				}
				return checkSMs("comm_sms", s.CommSMs, lim)
			},
			Show: showInt("comm_sms=%d", func(s Strategy) int { return s.CommSMs }),
			Setting: func(s Strategy, lim Limits) string {
				if s.CommSMs == 0 {
					return "none"
				}
				return fmt.Sprintf("%d of %d", s.CommSMs, lim.SMs)
			},
			Keys: []KnobKey{
				{Action: "sms_down", Key: "[", Needs: CapSMPartition,
					Help: func(lim Limits) string { return "comm SM partition -" + smsStep(lim) }},
				{Action: "sms_up", Key: "]", Needs: CapSMPartition,
					Help: func(lim Limits) string { return "comm SM partition +" + smsStep(lim) }},
			},
		},
		{
			Key: "compute_sms", Flag: "compute-sms",
			Usage:    "confine the compute op to an SM partition of this size; 0 = the rest",
			Examples: []string{"112"},
			Value:    func(s *Strategy) any { return &s.ComputeSMs },
			Needs:    needIf(CapSMPartition, func(s Strategy) bool { return s.ComputeSMs != 0 }),
			Check: func(s Strategy, lim Limits) []string {
				errs := checkSMs("compute_sms", s.ComputeSMs, lim)
				if s.CommSMs > 0 && s.ComputeSMs > 0 && s.CommSMs+s.ComputeSMs > lim.SMs {
					errs = append(errs, fmt.Sprintf("comm_sms + compute_sms is %d but %s has %d SMs; allowed a sum up to %d", s.CommSMs+s.ComputeSMs, lim.Device, lim.SMs, lim.SMs))
				}
				return errs
			},
			Show: showInt("compute_sms=%d", func(s Strategy) int { return s.ComputeSMs }),
			Setting: func(s Strategy, lim Limits) string {
				if s.ComputeSMs == 0 {
					return "the rest"
				}
				return fmt.Sprintf("%d of %d", s.ComputeSMs, lim.SMs)
			},
		},
		{
			Key: "comm_ctas", Flag: "comm-ctas", Usage: "cap the collective's CTAs (NCCL channels); 0 = library default",
			Examples: []string{"16"},
			Value:    func(s *Strategy) any { return &s.CommCTAs },
			Needs:    needIf(CapCommCTACap, func(s Strategy) bool { return s.CommCTAs != 0 }),
			Check: func(s Strategy, _ Limits) []string {
				if s.CommCTAs < 0 || s.CommCTAs > 64 {
					return []string{fmt.Sprintf("comm_ctas is %d; allowed 0 (library default) or 1..64", s.CommCTAs)}
				}
				return nil
			},
			Show: showInt("ctas=%d", func(s Strategy) int { return s.CommCTAs }),
			Setting: func(s Strategy, _ Limits) string {
				if s.CommCTAs == 0 {
					return "library default"
				}
				return fmt.Sprintf("at most %d", s.CommCTAs)
			},
			Keys: []KnobKey{{Action: "ctas", Key: "c", Needs: CapCommCTACap,
				Help: func(Limits) string { return "comm CTA cap: default, 8, 16, 32" }}},
		},
		{
			Key: "gemm_sm_target", Flag: "gemm-sm-target",
			Usage:    "size the GEMM for this many SMs (cuBLASLt SM count target); 0 = off",
			Examples: []string{"100"},
			Value:    func(s *Strategy) any { return &s.GEMMSMTarget },
			Needs:    needIf(CapGEMMSMTarget, func(s Strategy) bool { return s.GEMMSMTarget != 0 }),
			Check: func(s Strategy, lim Limits) []string {
				if s.GEMMSMTarget < 0 || s.GEMMSMTarget > lim.SMs {
					return []string{fmt.Sprintf("gemm_sm_target is %d; allowed 0 (off) or 1..%d", s.GEMMSMTarget, lim.SMs)}
				}
				return nil
			},
			Show: showInt("gemm_sm_target=%d", func(s Strategy) int { return s.GEMMSMTarget }),
			Setting: func(s Strategy, _ Limits) string {
				if s.GEMMSMTarget == 0 {
					return "off"
				}
				return strconv.Itoa(s.GEMMSMTarget)
			},
		},
		{
			Key: "comm_engine", Flag: "comm-engine",
			Usage: "what carries the collective: sm (NCCL kernels), dma (c3lab's copy-engine collectives), nccl-ce (NCCL 2.28's copy-engine path; all-gather, all-to-all) or p2p-load (c3lab's reduction kernel loading the peers' blocks over NVLink; reduce-scatter, all-reduce)",
			// p2p-load is no example: it runs reductions only, and the
			// knob walks (backends/backendtest) run every example on
			// all-gathers; each backend's own tests cover it.
			Examples: []string{string(EngineDMA), string(EngineNCCLCE)},
			Value:    func(s *Strategy) any { return &s.CommEngine },
			Needs: func(s Strategy) Capability {
				switch s.CommEngine {
				case EngineDMA:
					return CapDMA
				case EngineNCCLCE:
					return CapNCCLCopyEngine
				case EngineP2PLoad:
					return CapPeerLoad
				}
				return ""
			},
			Check: func(s Strategy, _ Limits) []string {
				switch s.CommEngine {
				case EngineSM, EngineDMA, EngineNCCLCE, EngineP2PLoad:
					return nil
				}
				return []string{fmt.Sprintf("comm_engine %q is unknown; allowed sm, dma, nccl-ce, p2p-load", s.CommEngine)}
			},
			Show: func(s Strategy) string {
				if s.CommEngine == EngineSM {
					return ""
				}
				return string(s.CommEngine)
			},
			Setting: func(s Strategy, _ Limits) string { return string(s.CommEngine) },
			Keys: []KnobKey{{Action: "dma", Key: "d", Needs: CapDMA,
				Help: func(Limits) string { return "comm engine: sm / dma / peer loads" }}},
		},
		{
			Key: "copy_engines", Flag: "copy-engines", Usage: "copy engines a dma collective uses; 0 = all",
			Examples: []string{"2"}, Base: Strategy{CommEngine: EngineDMA},
			Value: func(s *Strategy) any { return &s.CopyEngines },
			Needs: needIf(CapDMA, func(s Strategy) bool { return s.CopyEngines != 0 }),
			Check: dmaOnly("copy_engines", func(s Strategy) bool { return s.CopyEngines != 0 }, func(s Strategy, lim Limits) []string {
				if s.CopyEngines < 0 || s.CopyEngines > lim.CopyEngines {
					return []string{fmt.Sprintf("copy_engines is %d; allowed 0 (all) or 1..%d on %s", s.CopyEngines, lim.CopyEngines, lim.Device)}
				}
				return nil
			}),
			Show: func(s Strategy) string {
				if s.CommEngine == EngineSM || s.CopyEngines == 0 {
					return ""
				}
				return fmt.Sprintf("ces=%d", s.CopyEngines)
			},
			Setting: func(s Strategy, lim Limits) string {
				ces := fmt.Sprintf("all %d", lim.CopyEngines)
				if s.CopyEngines > 0 {
					ces = fmt.Sprintf("%d of %d", s.CopyEngines, lim.CopyEngines)
				}
				if s.CommEngine != EngineDMA {
					ces += " (with dma only)"
				}
				return ces
			},
			Keys: []KnobKey{{Action: "copy_engines", Key: "e", Needs: CapDMA,
				Help:   func(Limits) string { return "copy engines used by a dma collective" },
				Usable: func(lim Limits) bool { return lim.CopyEngines > 1 }}},
		},
		{
			Key: "chunk_bytes", Flag: "chunk", Usage: "split dma transfers into chunks of this size, e.g. 4MiB; 0 = one piece per engine",
			Examples: []string{"4MiB"}, Base: Strategy{CommEngine: EngineDMA},
			Value: func(s *Strategy) any { return &s.ChunkBytes },
			Needs: needIf(CapDMA, func(s Strategy) bool { return s.ChunkBytes != 0 }),
			Check: dmaOnly("chunk_bytes", func(s Strategy) bool { return s.ChunkBytes != 0 }, func(s Strategy, _ Limits) []string {
				if s.ChunkBytes < 0 || (s.ChunkBytes > 0 && s.ChunkBytes < 64<<10) {
					return []string{fmt.Sprintf("chunk_bytes is %d; allowed 0 (no chunking) or at least 64KiB", int64(s.ChunkBytes))}
				}
				return nil
			}),
			Show: func(s Strategy) string {
				if s.CommEngine == EngineSM || s.ChunkBytes == 0 {
					return ""
				}
				return fmt.Sprintf("chunk=%s", s.ChunkBytes)
			},
			Setting: func(s Strategy, _ Limits) string {
				if s.ChunkBytes == 0 {
					return "one piece per engine"
				}
				return s.ChunkBytes.String()
			},
		},
		{
			Key: "decompose", Flag: "decompose",
			Usage:    "split every dependent collective/GEMM pair into this many chunks wired chunk by chunk (async TP); 1 = whole; 0 = the scenario's own",
			Examples: []string{"4"},
			Value:    func(s *Strategy) any { return &s.Decompose },
			Needs:    needIf(CapDecompose, func(s Strategy) bool { return s.Decompose > 1 }),
			Check: func(s Strategy, _ Limits) []string {
				if s.Decompose < 0 || s.Decompose > MaxChunks {
					return []string{fmt.Sprintf("decompose is %d; allowed 0 (the scenario's own), 1 (whole) or 2..%d chunks", s.Decompose, MaxChunks)}
				}
				return nil
			},
			Show: showInt("decompose=%d", func(s Strategy) int { return s.Decompose }),
			Setting: func(s Strategy, _ Limits) string {
				switch s.Decompose {
				case 0:
					return "the scenario's own"
				case 1:
					return "whole pairs"
				}
				return fmt.Sprintf("%d chunks", s.Decompose)
			},
			// The lab's key cycles 0 -> 2 -> 4 -> 8 -> 1; it turns only
			// for a format-2 scenario with a decomposable pair, which the
			// lab checks against the scenario on screen.
			Keys: []KnobKey{{Action: "decompose", Key: "D", Needs: CapDecompose,
				Help: func(Limits) string { return "decompose dependent pairs: own / 2 / 4 / 8 chunks / whole" }}},
		},
	}
}

// checkSMs checks an SM partition size against the device's SMs and
// partition step.
func checkSMs(name string, v int, lim Limits) []string {
	step := max(lim.SMStep, 1)
	switch {
	case v < 0:
		return []string{fmt.Sprintf("%s is %d; allowed 0 (no partition) or %d..%d in steps of %d", name, v, step, lim.SMs-step, step)}
	case v > 0 && v%step != 0:
		// Suggest only the neighbouring steps that are themselves allowed.
		var try []string
		for _, t := range []int{v / step * step, (v/step + 1) * step} {
			if t >= step && t <= lim.SMs-step {
				try = append(try, fmt.Sprint(t))
			}
		}
		hint := ""
		if len(try) > 0 {
			hint = " (try " + strings.Join(try, " or ") + ")"
		}
		return []string{fmt.Sprintf("%s is %d; SM partitions on %s come in steps of %d%s", name, v, lim.Device, step, hint)}
	case v > 0 && v > lim.SMs-step:
		return []string{fmt.Sprintf("%s is %d but %s has %d SMs and the other op needs at least %d; allowed up to %d", name, v, lim.Device, lim.SMs, step, lim.SMs-step)}
	}
	return nil
}
