package heuristics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// WithinTolerance is the regret in T_c3 up to which an advice counts as
// finding the measured best (3 %, the target).
const WithinTolerance = 0.03

// TuneBudget is the number of measured candidates within which Tune is
// to find the measured best (4, the target: on at least 90 % of
// scenarios).
const TuneBudget = 4

// EvalCase is one scenario as one sweep measured it: the strategies of
// that sweep, measured in one session, so that their T_c3 compare.
type EvalCase struct {
	// Scenario is the scenario's current name, the key of the folds.
	Scenario string
	// Source is the sweep file.
	Source string
	// Runs are the measured strategies, in the sweep's order.
	Runs []Measurement
}

// Cases groups measurements into evaluation cases: one per scenario and
// sweep, sorted by scenario then source.
func Cases(m Measurements) []EvalCase {
	var out []EvalCase
	for name, ms := range m {
		var srcs []string
		for _, x := range ms {
			if !slices.Contains(srcs, x.Source) {
				srcs = append(srcs, x.Source)
			}
		}
		for _, s := range srcs {
			c := EvalCase{Scenario: name, Source: s}
			for _, x := range ms {
				if x.Source == s {
					c.Runs = append(c.Runs, x)
				}
			}
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b EvalCase) int {
		return cmp.Or(cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Source, b.Source))
	})
	return out
}

// group is the stratum a case's scenario is dealt into folds by: its
// communication kinds, graphs apart, so that every fold's training set
// holds each kind where there are a few.
func group(sc scenarios.Scenario) string {
	g := fmt.Sprint(commKinds(sc))
	if sc.IsGraph() {
		g = "graph " + g
	}
	return g
}

// Folds deals the cases' scenarios into k folds: within each group
// (communication kind, graphs apart) in an order shuffled from seed, one
// fold after another, so the folds are balanced. It returns the fold of
// each scenario; a scenario's cases are all in one fold.
func Folds(cases []EvalCase, k int, seed uint64) map[string]int {
	groups := map[string][]string{}
	for _, c := range cases {
		if len(c.Runs) == 0 {
			continue
		}
		g := group(c.Runs[0].Result.Scenario)
		if !slices.Contains(groups[g], c.Scenario) {
			groups[g] = append(groups[g], c.Scenario)
		}
	}
	keys := make([]string, 0, len(groups))
	for g := range groups {
		keys = append(keys, g)
	}
	slices.Sort(keys)
	rng := rand.New(rand.NewPCG(seed, 0x616476697365))
	fold := map[string]int{}
	next := 0
	for _, g := range keys {
		names := groups[g]
		slices.Sort(names)
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for _, n := range names {
			if _, seen := fold[n]; !seen {
				fold[n] = next % k
				next++
			}
		}
	}
	return fold
}

// Fitter returns the model fitted on the named scenarios' measurements
// only (fold is the fold held out, for progress).
type Fitter func(ctx context.Context, fold int, train []string) (Model, error)

// EvalOptions are Evaluate's settings.
type EvalOptions struct {
	// Folds is K of the K-fold split by scenario (at least 2).
	Folds int
	// Seed deals the folds.
	Seed uint64
	// Fit fits a model on a training set.
	Fit Fitter
	// Progress, when set, is told each fold's start and end.
	Progress func(fold, folds int, what string)
}

// Scored is one case's evaluation.
type Scored struct {
	Scenario string `json:"scenario"`
	Source   string `json:"source"`
	Fold     int    `json:"fold"`
	// Class is the paper's class of the scenario (from the baseline's
	// isolated times), Comm its communication kinds.
	Class string `json:"class"`
	Comm  string `json:"comm"`
	// Strategies is how many strategies the sweep measured.
	Strategies int `json:"strategies"`
	// Advised is the model's top pick among the measured strategies,
	// Best the measured best (highest U), Baseline the default.
	Advised string `json:"advised"`
	Best    string `json:"best"`
	// AdvisedTC3, BestTC3 and BaselineTC3 are measured T_c3 (ns), the U
	// measured U.
	AdvisedTC3  float64 `json:"advised_t_c3_ns"`
	BestTC3     float64 `json:"best_t_c3_ns"`
	BaselineTC3 float64 `json:"baseline_t_c3_ns,omitempty"`
	AdvisedU    float64 `json:"advised_u"`
	BestU       float64 `json:"best_u"`
	// PredictedU is the model's U for the advised strategy.
	PredictedU float64 `json:"predicted_u"`
	// Regret is the advised T_c3 over the best's, minus 1; RegretU the
	// best's U minus the advised's, in points (x100).
	Regret  float64 `json:"regret"`
	RegretU float64 `json:"regret_u_points"`
	// Within says Regret <= WithinTolerance; Tied that the advised is
	// not told apart from the best (profiler.Compare).
	Within bool `json:"within_3pct"`
	Tied   bool `json:"tied_with_best"`
	// SlowerThanDefault says the advised strategy measured slower than
	// the baseline beyond their intervals; NoBaseline that the sweep did
	// not measure the baseline.
	SlowerThanDefault bool `json:"slower_than_default"`
	NoBaseline        bool `json:"no_baseline,omitempty"`
	// TopUnmeasured names the model's top pick over every sensible
	// strategy when the sweep did not measure it ("" when it did).
	TopUnmeasured string `json:"top_unmeasured,omitempty"`
	// Rules names the strategy of the rules of thumb alone (Advise) when
	// the sweep measured it, RulesRegret its regret in T_c3: the
	// reference the model's advice is to beat.
	Rules       string   `json:"rules,omitempty"`
	RulesRegret *float64 `json:"rules_regret,omitempty"`
	// TunePosition is where Tune, measuring the measured strategies in
	// the model's order (the advice first, then the rest by predicted
	// rank, as the advice's candidates), first meets the measured best
	// or a strategy not told apart from it (profiler.Compare): 1-based,
	// so the measurements Tune needs to find it. Over the strategies the
	// sweep measured only.
	TunePosition int    `json:"tune_position"`
	Err          string `json:"error,omitempty"`
}

// Summary sums up scored cases.
type Summary struct {
	// Key is what the cases share ("all", a class, a communication kind).
	Key   string `json:"key"`
	Cases int    `json:"cases"`
	// Within is the share of cases within 3 % of the best.
	Within float64 `json:"within_3pct"`
	// MedianRegret and MeanRegret are of T_c3 (0.01: 1 %), MaxRegret
	// the worst; MeanRegretU in points of U.
	MedianRegret float64 `json:"median_regret"`
	MeanRegret   float64 `json:"mean_regret"`
	MaxRegret    float64 `json:"max_regret"`
	MeanRegretU  float64 `json:"mean_regret_u_points"`
	// Slower counts cases advised slower than the default beyond the
	// interval; Best cases whose advice is the measured best.
	Slower int `json:"slower_than_default"`
	Best   int `json:"advised_best"`
	// Unmeasured counts cases whose top pick over every sensible strategy
	// the sweep did not measure: there the score is of the runner-up
	// among the measured ones.
	Unmeasured int `json:"top_pick_unmeasured"`
	// RulesCases counts the cases whose rules-of-thumb strategy was
	// measured; RulesWithin and RulesMedianRegret score it there.
	RulesCases        int     `json:"rules_cases"`
	RulesWithin       float64 `json:"rules_within_3pct"`
	RulesMedianRegret float64 `json:"rules_median_regret"`
	// TuneWithin is the share of cases whose TunePosition is at most
	// TuneBudget; MaxTunePosition the worst position.
	TuneWithin      float64 `json:"tune_within_4"`
	MaxTunePosition int     `json:"max_tune_position"`
}

// Evaluation is Evaluate's result.
type Evaluation struct {
	// Scenarios counts the distinct scenarios of the cases.
	Scenarios int       `json:"scenarios"`
	Folds     int       `json:"folds"`
	Seed      uint64    `json:"seed"`
	Cases     []Scored  `json:"cases"`
	All       Summary   `json:"summary"`
	ByClass   []Summary `json:"by_class"`
	ByComm    []Summary `json:"by_comm"`
}

// Evaluate scores the advice against the measured best of every case,
// out of sample: the cases' scenarios are dealt into K folds (Folds), and
// each fold is advised on by a model fitted on the other folds' scenarios
// only. The advice on a case is the model's top-ranked strategy among
// those its sweep measured (the measured set is what can be scored; a
// top pick over every sensible strategy that the sweep did not measure is
// reported as TopUnmeasured).
func Evaluate(ctx context.Context, cases []EvalCase, opt EvalOptions) (Evaluation, error) {
	if opt.Folds < 2 {
		return Evaluation{}, fmt.Errorf("want at least 2 folds, got %d", opt.Folds)
	}
	if opt.Fit == nil {
		return Evaluation{}, errors.New("no model fitter")
	}
	fold := Folds(cases, opt.Folds, opt.Seed)
	ev := Evaluation{Folds: opt.Folds, Seed: opt.Seed, Scenarios: len(fold)}
	for k := range opt.Folds {
		var train, held []string
		for name, f := range fold {
			if f == k {
				held = append(held, name)
			} else {
				train = append(train, name)
			}
		}
		if len(held) == 0 {
			continue
		}
		slices.Sort(train)
		if opt.Progress != nil {
			opt.Progress(k, opt.Folds, fmt.Sprintf("fold %d of %d: fitting on %d scenarios", k+1, opt.Folds, len(train)))
		}
		m, err := opt.Fit(ctx, k, train)
		if err != nil {
			return Evaluation{}, fmt.Errorf("fold %d: %w", k+1, err)
		}
		for _, c := range cases {
			if fold[c.Scenario] != k || len(c.Runs) == 0 {
				continue
			}
			s, err := score(ctx, m, c)
			if err != nil {
				return Evaluation{}, fmt.Errorf("fold %d: %w", k+1, err)
			}
			s.Fold = k
			ev.Cases = append(ev.Cases, s)
		}
	}
	if opt.Progress != nil {
		opt.Progress(opt.Folds, opt.Folds, "done")
	}
	slices.SortFunc(ev.Cases, func(a, b Scored) int {
		return cmp.Or(cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Source, b.Source))
	})
	ev.All = summarize("all", ev.Cases)
	ev.ByClass = summarizeBy(ev.Cases, func(s Scored) string { return s.Class })
	ev.ByComm = summarizeBy(ev.Cases, func(s Scored) string { return s.Comm })
	return ev, nil
}

// score advises on one case with m and scores the advice.
func score(ctx context.Context, m Model, c EvalCase) (Scored, error) {
	sc := c.Runs[0].Result.Scenario
	s := Scored{Scenario: c.Scenario, Source: c.Source, Strategies: len(c.Runs), Comm: commLabel(sc)}
	var cands []profiler.NamedStrategy
	for _, r := range c.Runs {
		cands = append(cands, profiler.NamedStrategy{Name: r.Strategy, Strategy: r.Result.Strategy})
	}
	ranked, err := RankCandidates(ctx, m, sc, cands)
	if err != nil {
		return s, err
	}
	best := ranked.Best()
	if best < 0 {
		s.Err = "the model predicts none of the measured strategies"
		return s, nil
	}
	adv := ranked.Predictions[best]
	s.Advised, s.PredictedU = adv.Name, adv.Uplift
	runOf := func(name string) (Measurement, bool) {
		i := slices.IndexFunc(c.Runs, func(r Measurement) bool { return r.Strategy == name })
		if i < 0 {
			return Measurement{}, false
		}
		return c.Runs[i], true
	}
	a, _ := runOf(adv.Name)
	b := c.Runs[0]
	for _, r := range c.Runs[1:] {
		if profiler.Leads(r.Result, b.Result) {
			b = r
		}
	}
	s.Best = b.Strategy
	s.AdvisedTC3, s.BestTC3 = a.Result.TC3.Median, b.Result.TC3.Median
	s.AdvisedU, s.BestU = a.Result.Uplift, b.Result.Uplift
	s.Regret = s.AdvisedTC3/s.BestTC3 - 1
	if s.AdvisedU > 0 && s.BestU > 0 {
		s.RegretU = 100 * (s.BestU - s.AdvisedU)
	}
	s.Within = s.Regret <= WithinTolerance
	s.Tied = a.Strategy == b.Strategy || profiler.Compare(a.Result, b.Result) == profiler.NotToldApart
	s.TunePosition = tunePosition(ranked, best, c.Runs, b)
	if base, ok := runOf("baseline"); ok {
		s.BaselineTC3 = base.Result.TC3.Median
		s.Class = string(base.Result.Class)
		s.SlowerThanDefault = profiler.Compare(a.Result, base.Result) == profiler.Worse
	} else {
		s.NoBaseline = true
		s.Class = string(c.Runs[0].Result.Class)
	}
	if s.Class == "" {
		s.Class = "graph"
	}
	// The top pick over every sensible strategy, measured or not.
	if cm, ok := m.(interface{ Capabilities() backends.Capabilities }); ok {
		caps := cm.Capabilities()
		rules := advise(sc, caps, FindingsFor(caps.Limits.Device)).Strategy.Normalize()
		if i := slices.IndexFunc(c.Runs, func(r Measurement) bool { return r.Result.Strategy.Normalize() == rules }); i >= 0 {
			reg := c.Runs[i].Result.TC3.Median/s.BestTC3 - 1
			s.Rules, s.RulesRegret = c.Runs[i].Strategy, &reg
		}
		all := CandidateSet(sc, caps)
		if r, err := RankCandidates(ctx, m, sc, all); err == nil {
			if i := r.Best(); i >= 0 {
				if _, ok := runOf(r.Predictions[i].Name); !ok && !measuredStrategy(c, r.Predictions[i].Strategy) {
					s.TopUnmeasured = r.Predictions[i].Name
				}
			}
		}
	}
	return s, nil
}

// tunePosition is the 1-based position, in the order Tune measures the
// ranked strategies (the advised one, then the others by rank), of the
// first whose measured run is the best's or not told apart from it; 0
// when none is (the best was not ranked).
func tunePosition(r Ranked, advised int, runs []Measurement, best Measurement) int {
	order := append([]Prediction{r.Predictions[advised]}, slices.Delete(slices.Clone(r.Predictions), advised, advised+1)...)
	for i, p := range order {
		j := slices.IndexFunc(runs, func(m Measurement) bool { return m.Strategy == p.Name })
		if j < 0 {
			continue
		}
		if runs[j].Strategy == best.Strategy || profiler.Compare(runs[j].Result, best.Result) == profiler.NotToldApart {
			return i + 1
		}
	}
	return 0
}

// measuredStrategy reports whether the case measured st under any name.
func measuredStrategy(c EvalCase, st scenarios.Strategy) bool {
	return slices.ContainsFunc(c.Runs, func(r Measurement) bool { return r.Result.Strategy.Normalize() == st.Normalize() })
}

// commLabel names a scenario's communication: its collective, or for a
// graph "graph: " and its kinds.
func commLabel(sc scenarios.Scenario) string {
	if !sc.IsGraph() {
		return string(sc.Comm.Collective)
	}
	ks := commKinds(sc)
	var names []string
	for _, k := range ks {
		names = append(names, string(k))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	l := "graph"
	for i, n := range names {
		if i == 0 {
			l += ": " + n
		} else {
			l += "+" + n
		}
	}
	if hasDependency(sc) {
		l += " +dep"
	}
	return l
}

func summarizeBy(cases []Scored, key func(Scored) string) []Summary {
	var keys []string
	for _, c := range cases {
		if c.Err == "" && !slices.Contains(keys, key(c)) {
			keys = append(keys, key(c))
		}
	}
	slices.Sort(keys)
	var out []Summary
	for _, k := range keys {
		out = append(out, summarize(k, slices.DeleteFunc(slices.Clone(cases), func(c Scored) bool { return key(c) != k })))
	}
	return out
}

// summarize sums up the cases that were scored (no Err).
func summarize(key string, cases []Scored) Summary {
	s := Summary{Key: key}
	var regrets, rules []float64
	var sumU float64
	for _, c := range cases {
		if c.Err != "" {
			continue
		}
		if c.RulesRegret != nil {
			rules = append(rules, *c.RulesRegret)
			if *c.RulesRegret <= WithinTolerance {
				s.RulesWithin++
			}
		}
		s.Cases++
		regrets = append(regrets, c.Regret)
		sumU += c.RegretU
		if c.Within {
			s.Within++
		}
		if c.SlowerThanDefault {
			s.Slower++
		}
		if c.Advised == c.Best {
			s.Best++
		}
		if c.TopUnmeasured != "" {
			s.Unmeasured++
		}
		if c.TunePosition > 0 && c.TunePosition <= TuneBudget {
			s.TuneWithin++
		}
		s.MaxTunePosition = max(s.MaxTunePosition, c.TunePosition)
	}
	if s.RulesCases = len(rules); s.RulesCases > 0 {
		s.RulesWithin /= float64(s.RulesCases)
		slices.Sort(rules)
		s.RulesMedianRegret = median(rules)
	}
	if s.Cases == 0 {
		return s
	}
	s.Within /= float64(s.Cases)
	s.TuneWithin /= float64(s.Cases)
	slices.Sort(regrets)
	s.MedianRegret = median(regrets)
	s.MaxRegret = regrets[len(regrets)-1]
	var sum float64
	for _, r := range regrets {
		sum += r
	}
	s.MeanRegret = sum / float64(len(regrets))
	s.MeanRegretU = sumU / float64(s.Cases)
	return s
}

// median of sorted values.
func median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
