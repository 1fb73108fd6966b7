package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// figures are the three figures compare reports for one result.
type figures struct {
	TC3, U, F float64
}

// stream is one kind of repetition of a result: the concurrent run, the
// isolated compute or comm runs, or the serial default's isolated runs.
// vals[i] holds repetition i's values, one per column: the wall time for
// the concurrent run, each op's time for an isolated run.
type stream struct {
	vals [][]float64
	// byRound maps a round to the repetitions measured in it; flat is set
	// when the rounds are unknown, and the repetitions are then resampled
	// on their own, as one pool.
	byRound map[int][]int
	flat    bool
}

// opCol says where an op's time alone is: which stream and column.
type opCol struct {
	stream, col int
	count       int
	comm        bool
}

// sampler recomputes a result's figures from a resample of its
// repetitions: the rounds resampled with replacement, then the
// repetitions of each run within each drawn round, so the isolated and
// concurrent runs of one round stay together.
type sampler struct {
	streams []stream
	rounds  []int
	// ops are the strategy's graph ops, defOps the serial default's.
	ops, defOps []opCol
	graph       *scenarios.Graph
	// sd is what the serial default is: the result's own T_serial
	// (ownSD), the serial default's repetitions (defOps), or a constant
	// (fixedSD, 0 when unknown).
	ownSD   bool
	fixedSD float64
	// scratch holds a column's values while its median is taken.
	scratch []float64
}

// Streams of a sampler.
const (
	sConcurrent = iota
	sCompute
	sComm
	sDefCompute
	sDefComm
	nStreams
)

// newSampler prepares result r for resampling. It fails when r has no
// concurrent repetitions or its repetitions do not fit its graph.
func newSampler(r profiler.Result) (*sampler, error) {
	c3 := r.Reps[backends.ModeConcurrent]
	if len(c3) == 0 {
		return nil, fmt.Errorf("no concurrent repetitions")
	}
	g, err := r.Scenario.Graph(r.Strategy)
	if err != nil {
		return nil, fmt.Errorf("the result's graph: %w", err)
	}
	s := &sampler{streams: make([]stream, nStreams), graph: g}
	if len(r.Ops) != len(g.Ops) {
		s.graph = nil // as Derive: T_ideal is then max(T_comp, T_comm)
	}
	s.streams[sConcurrent] = newStream(len(c3), r.RoundOf[backends.ModeConcurrent], func(i int) []float64 {
		return []float64{float64(c3[i].Wall)}
	})
	for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm} {
		st := sCompute
		if m == backends.ModeComm {
			st = sComm
		}
		if s.streams[st], err = opStream(g, r.Reps[m], r.RoundOf[m]); err != nil {
			return nil, fmt.Errorf("%s repetitions: %w", m, err)
		}
	}
	s.ops = opCols(g, sCompute, sComm)
	switch {
	case profiler.IsSerialDefault(r.Scenario, r.Strategy):
		s.ownSD = true
	case len(r.DefaultReps[backends.ModeCompute]) > 0 && len(r.DefaultReps[backends.ModeComm]) > 0:
		dg, err := r.Scenario.Graph(profiler.SerialDefaultStrategy())
		if err != nil {
			return nil, fmt.Errorf("the serial default's graph: %w", err)
		}
		for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm} {
			st := sDefCompute
			if m == backends.ModeComm {
				st = sDefComm
			}
			// The serial default's runs are made in the same rounds, as
			// many per round as the strategy's own isolated runs.
			var rounds []int
			if len(r.RoundOf[m]) == len(r.DefaultReps[m]) {
				rounds = r.RoundOf[m]
			}
			if s.streams[st], err = opStream(dg, r.DefaultReps[m], rounds); err != nil {
				return nil, fmt.Errorf("serial-default %s repetitions: %w", m, err)
			}
		}
		s.defOps = opCols(dg, sDefCompute, sDefComm)
	default:
		s.fixedSD = r.SerialDefault
	}
	seen := map[int]bool{}
	for _, st := range s.streams {
		if st.flat {
			continue
		}
		for k := range st.byRound {
			if !seen[k] {
				seen[k] = true
				s.rounds = append(s.rounds, k)
			}
		}
	}
	slices.Sort(s.rounds)
	return s, nil
}

// newStream groups n repetitions by their rounds; without rounds (or with
// rounds that do not fit) they are one round.
func newStream(n int, roundOf []int, val func(i int) []float64) stream {
	st := stream{vals: make([][]float64, n), byRound: map[int][]int{}, flat: len(roundOf) != n}
	for i := range n {
		st.vals[i] = val(i)
		k := 0
		if len(roundOf) == n {
			k = roundOf[i]
		}
		st.byRound[k] = append(st.byRound[k], i)
	}
	return st
}

// opStream holds each op's time per repetition, as profiler takes it: the
// per-op times, or for a pair without them Compute and Comm.
func opStream(g *scenarios.Graph, reps []backends.Rep, roundOf []int) (stream, error) {
	pair := len(g.OpsOf(scenarios.RoleCompute)) <= 1 && len(g.OpsOf(scenarios.RoleComm)) <= 1
	for _, rp := range reps {
		switch {
		case len(rp.Ops) == len(g.Ops):
		case len(rp.Ops) == 0 && pair:
		case len(rp.Ops) == 0:
			return stream{}, fmt.Errorf("no per-op times for a graph of %d ops", len(g.Ops))
		default:
			return stream{}, fmt.Errorf("times for %d ops; the graph has %d", len(rp.Ops), len(g.Ops))
		}
	}
	return newStream(len(reps), roundOf, func(i int) []float64 {
		rp := reps[i]
		v := make([]float64, len(g.Ops))
		for j, o := range g.Ops {
			switch {
			case len(rp.Ops) == len(g.Ops):
				v[j] = float64(rp.Ops[j])
			case o.Role == scenarios.RoleComm:
				v[j] = float64(rp.Comm)
			default:
				v[j] = float64(rp.Compute)
			}
		}
		return v
	}), nil
}

// opCols places each op of g: a comm op's time alone is in the comm
// stream, any other op's in the compute stream, both at the op's column.
func opCols(g *scenarios.Graph, comp, comm int) []opCol {
	out := make([]opCol, len(g.Ops))
	for i, o := range g.Ops {
		c := opCol{stream: comp, col: i, count: max(o.Count, 1)}
		if o.Role == scenarios.RoleComm {
			c.stream, c.comm = comm, true
		}
		out[i] = c
	}
	return out
}

// all is every repetition of every stream: the sample the result itself
// was computed from.
func (s *sampler) all() [][]int {
	sel := make([][]int, len(s.streams))
	for i, st := range s.streams {
		sel[i] = make([]int, len(st.vals))
		for j := range sel[i] {
			sel[i][j] = j
		}
	}
	return sel
}

// resample draws the rounds with replacement, then within each drawn round
// as many repetitions of each stream as it holds, with replacement. sel is
// reused.
func (s *sampler) resample(rng *rand.Rand, sel [][]int) [][]int {
	if sel == nil {
		sel = make([][]int, len(s.streams))
	}
	for i, st := range s.streams {
		sel[i] = sel[i][:0]
		if st.flat {
			for range st.vals {
				sel[i] = append(sel[i], rng.IntN(len(st.vals)))
			}
		}
	}
	for range s.rounds {
		k := s.rounds[rng.IntN(len(s.rounds))]
		for i, st := range s.streams {
			if st.flat {
				continue
			}
			in := st.byRound[k]
			for range in {
				sel[i] = append(sel[i], in[rng.IntN(len(in))])
			}
		}
	}
	return sel
}

// figures computes T_c3, U and F from the selected repetitions as
// profiler.Result.Derive does from all of them: medians of the wall time
// and of each op's time alone, T_serial their sum, T_ideal the graph's
// list schedule at those times (max(T_comp, T_comm) without a graph), the
// serial default the same sum over its own runs. A figure that cannot be
// computed (a stream left empty by the draw) is NaN.
func (s *sampler) figures(sel [][]int) figures {
	tc3 := s.median(sConcurrent, 0, sel)
	alone := make([]float64, len(s.ops))
	var tComp, tComm float64
	for i, o := range s.ops {
		alone[i] = s.median(o.stream, o.col, sel)
		if o.comm {
			tComm += alone[i]
		} else {
			tComp += alone[i]
		}
	}
	tSerial := tComp + tComm
	tIdeal := math.Max(tComp, tComm)
	if s.graph != nil {
		dur := make([]float64, len(alone))
		for i, a := range alone {
			dur[i] = a / float64(s.ops[i].count)
		}
		tIdeal = s.graph.ListSchedule(dur).Makespan
	}
	sd := s.fixedSD
	switch {
	case s.ownSD:
		sd = tSerial
	case s.defOps != nil:
		sd = 0
		for _, o := range s.defOps {
			sd += s.median(o.stream, o.col, sel)
		}
	}
	out := figures{TC3: tc3, U: math.NaN(), F: math.NaN()}
	if sd > 0 {
		out.U = profiler.SpeedupOver(sd, tc3)
	}
	if f, ok := profiler.FractionOfIdeal(profiler.SpeedupOver(tSerial, tc3), profiler.SpeedupOver(tSerial, tIdeal)); ok {
		out.F = f
	}
	return out
}

// median is the median of one column of a stream over the selected
// repetitions (NaN when none is selected).
func (s *sampler) median(st, col int, sel [][]int) float64 {
	idx := sel[st]
	if len(idx) == 0 {
		return math.NaN()
	}
	v := s.scratch[:0]
	for _, i := range idx {
		v = append(v, s.streams[st].vals[i][col])
	}
	s.scratch = v
	return median(v)
}

// median sorts v and returns its median (the mean of the middle two for an
// even count, as profiler.Summarize has it).
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// noisy reports whether any stream's repetitions differ: a result whose
// repetitions are all alike (the simulator's) has no noise to resample.
func (s *sampler) noisy() bool {
	for _, st := range s.streams {
		for _, v := range st.vals {
			if !slices.Equal(v, st.vals[0]) {
				return true
			}
		}
	}
	return false
}
