package heuristics

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// AdviseOptions are AdviseModel's settings.
type AdviseOptions struct {
	// TopK is how many ranked candidates the advice keeps (the baseline
	// joins them when it is not among them); 0 is DefaultTopK.
	TopK int
	// Measured, when set, holds committed measurements the reasons quote.
	Measured Measurements
}

// AdviseModel advises on sc for a device of caps by ranking every
// sensible strategy (CandidateSet) with the model's predictions: the
// advice is the top one by predicted U (never one predicted slower than
// the default, Ranked.Best), the candidates and predictions the top k.
// The reasons quote this scenario's predicted figures, the measurements
// of it in opt.Measured, and the rules (Advise) as explanations of the
// advised strategy's knobs. When the model runs no candidate, the rules'
// advice is returned with a reason saying so.
func AdviseModel(ctx context.Context, m Model, sc scenarios.Scenario, caps backends.Capabilities, opt AdviseOptions) (Advice, error) {
	f := FindingsFor(caps.Limits.Device)
	rules := advise(sc, caps, f)
	// A candidate whose prediction rests on a constant nobody measured is
	// left out: advice never rests on a guess. The reasons say which and
	// why, so the user knows what a measurement would add.
	var cands []profiler.NamedStrategy
	var guessed []string
	why := ""
	u, _ := m.(unmeasured)
	for _, c := range CandidateSet(sc, caps) {
		if u != nil {
			if w := u.Unmeasured(c.Strategy); w != "" {
				guessed, why = append(guessed, c.Name), w
				continue
			}
		}
		cands = append(cands, c)
	}
	// The rules' strategy is ranked too, under the name "rules" when no
	// named strategy is it.
	if !containsStrategy(cands, rules.Strategy) {
		cands = append(cands, profiler.NamedStrategy{Name: "rules", Strategy: rules.Strategy})
	}
	ranked, err := RankCandidates(ctx, m, sc, cands)
	if err != nil {
		return Advice{}, err
	}
	best := ranked.Best()
	if best < 0 {
		rules.Reasons = append([]string{fmt.Sprintf("%s predicts none of the %d candidates; these are the rules of thumb alone", ranked.Model, len(cands))}, rules.Reasons...)
		return rules, nil
	}
	k := opt.TopK
	if k <= 0 {
		k = DefaultTopK
	}
	a := Advice{Strategy: ranked.Predictions[best].Strategy, Model: ranked.Model, Advised: ranked.Predictions[best].Name}
	a.Predictions = topK(ranked, best, k)
	for _, p := range a.Predictions {
		a.Candidates = append(a.Candidates, profiler.NamedStrategy{Name: p.Name, Strategy: p.Strategy})
	}
	a.Reasons = predictedReasons(ranked, best, rules.Strategy)
	a.Reasons = append(a.Reasons, measuredReasons(opt.Measured, sc.Name, ranked.Predictions[best].Name)...)
	a.Reasons = append(a.Reasons, explain(sc, caps, f, a.Strategy)...)
	if len(guessed) > 0 {
		a.Reasons = append(a.Reasons, fmt.Sprintf("not ranked: %s, because %s", strings.Join(guessed, ", "), why))
	}
	return a, nil
}

// topK is the advised prediction, then the others in rank order, k in
// all, the baseline added when missing.
func topK(r Ranked, best, k int) []Prediction {
	out := []Prediction{r.Predictions[best]}
	for i, p := range r.Predictions {
		if len(out) >= k {
			break
		}
		if i != best && p.ok() {
			out = append(out, p)
		}
	}
	if b := r.Find("baseline"); b >= 0 && r.Predictions[b].ok() && !containsPrediction(out, "baseline") {
		out = append(out, r.Predictions[b])
	}
	return out
}

func containsPrediction(ps []Prediction, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

func containsStrategy(cands []profiler.NamedStrategy, st scenarios.Strategy) bool {
	for _, c := range cands {
		if c.Strategy.Normalize() == st.Normalize() {
			return true
		}
	}
	return false
}

// predictedReasons quote the scenario's predicted figures: the advised
// strategy's, its lead over the runner-up and the default, and where the
// rules of thumb would land.
func predictedReasons(r Ranked, best int, rules scenarios.Strategy) []string {
	adv := r.Predictions[best]
	line := fmt.Sprintf("predicted by %s: T_c3 %s, U %s", r.Model, report.Duration(adv.TC3), report.Uplift(adv.Uplift))
	close := false // the runner-up is nearer than the model's picks are held to
	for i, p := range r.Predictions {
		if i != best && p.ok() {
			if p.TC3 <= adv.TC3*(1+5e-4) {
				line += fmt.Sprintf(", tied with %s (T_c3 %s; the grid's order breaks the tie)", p.Name, report.Duration(p.TC3))
			} else {
				line += fmt.Sprintf(", %s ahead of %s (T_c3 %s)", leadPercent(adv, p), p.Name, report.Duration(p.TC3))
			}
			if me := r.ModelError; me != nil && me.RankCases > 0 && p.TC3 < adv.TC3*(1+me.RankTolerance) {
				close = true
			}
			break
		}
	}
	out := []string{line}
	if close {
		me := r.ModelError
		out = append(out, fmt.Sprintf("a close call: the runner-up is within %s, closer than the model tells apart (on held-out %s scenarios its pick was within %s of the measured best in %d of %d, not always the best); on a GPU node, c3lab advise --tune measures the top candidates",
			report.WholePercent(me.RankTolerance), me.Device, report.WholePercent(me.RankTolerance), me.RankWithin, me.RankCases))
	}
	if b := r.Find("baseline"); b >= 0 && b != best && r.Predictions[b].ok() {
		out = append(out, fmt.Sprintf("the default (baseline) is predicted at T_c3 %s, U %s: the advice is %s faster",
			report.Duration(r.Predictions[b].TC3), report.Uplift(r.Predictions[b].Uplift), leadPercent(adv, r.Predictions[b])))
	} else if b == best {
		out = append(out, "no strategy is predicted faster than the default (baseline): advise it")
	}
	if adv.Uplift > 0 && adv.Uplift < 1 {
		out = append(out, fmt.Sprintf("even the advice is predicted slower than the ops one after another (U %s < 1)", report.Uplift(adv.Uplift)))
	}
	for i, p := range r.Predictions {
		if p.Strategy.Normalize() == rules.Normalize() && i != best {
			if p.ok() {
				out = append(out, fmt.Sprintf("the rules of thumb alone would advise %s (%s), predicted at T_c3 %s, U %s", p.Name, p.Strategy, report.Duration(p.TC3), report.Uplift(p.Uplift)))
			}
			break
		}
	}
	return out
}

// leadPercent is how much shorter a's T_c3 is than b's, in %.
func leadPercent(a, b Prediction) string {
	if b.TC3 <= 0 {
		return report.NA
	}
	return fmt.Sprintf("%.1f %%", 100*(b.TC3/a.TC3-1))
}

// measuredReasons quote the committed measurements of the scenario under
// the advised strategy, with that sweep's measured best; or say there are
// none.
func measuredReasons(m Measurements, scenario, strategy string) []string {
	if len(m) == 0 {
		return nil
	}
	got := m.Of(scenario, strategy)
	if len(got) == 0 {
		if len(m[CurrentName(scenario)]) == 0 {
			return []string{"no committed measurement of this scenario"}
		}
		return []string{fmt.Sprintf("%s was never measured on this scenario in the committed sweeps", strategy)}
	}
	var out []string
	for _, x := range got {
		u, t := profiler.RemeasuredOf(x.Result).UpliftCI, profiler.RemeasuredOf(x.Result).TC3CI
		line := fmt.Sprintf("measured in %s: T_c3 %s, U %s", ShortSource(x.Source), report.DurationCI(x.Result.TC3.Median, t), report.UpliftCI(x.Result.Uplift, u))
		if b, ok := m.BestIn(scenario, x.Source); ok && b.Strategy != strategy {
			line += fmt.Sprintf("; the best measured there was %s, U %s", b.Strategy, report.Uplift(b.Result.Uplift))
			if profiler.Compare(b.Result, x.Result) == profiler.NotToldApart {
				line += " (not told apart)"
			}
		} else if ok {
			line += ", the best measured there"
		}
		out = append(out, line)
	}
	return out
}

// ShortSource is a sweep's path from its results folder on
// ("2026-11-30-h200x2-gated/sweep.json").
func ShortSource(p string) string {
	return filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(p)), filepath.Base(p)))
}

// explain says why each knob of st can pay on sc: the rules' reasons,
// now explanations of what the model ranked first.
func explain(sc scenarios.Scenario, caps backends.Capabilities, f Findings, st scenarios.Strategy) []string {
	var out []string
	say := func(format string, v ...any) { out = append(out, fmt.Sprintf(format, v...)) }
	kinds := commKinds(sc)
	what := "collective"
	if len(kinds) == 1 && kinds[0] != "" {
		what = string(kinds[0])
	}
	memBound := !sc.IsGraph() && MemoryBound(sc.Compute)
	st = st.Normalize()
	if st == (scenarios.Strategy{}.Normalize()) {
		say("why plain C3 can be best: every knob costs something (a priority or a partition slows the GEMM, copy engines add setup and synchronization), and here the model finds no knob that earns it back")
	}
	if st.Launch == scenarios.CommFirst && st.CommEngine != scenarios.EngineDMA {
		if st.CommPriority < 0 {
			say("why first at priority %d: a GEMM enqueued first keeps every SM until its last wave, and the %s waits%s", st.CommPriority, what, f.in("comm-first"))
		} else {
			say("why first: the %s then holds its SMs before the GEMM fills the GPU", what)
		}
	}
	switch st.CommEngine {
	case scenarios.EngineDMA:
		switch {
		case hasHostCopy(sc):
			say("why copy engines: they take no SM, so the kernel beside them keeps the whole GPU%s", f.in("host-copy-engines"))
			if writesToHost(sc) {
				say("and c3lab's copy kernel, writing to host memory, would hold up every kernel beside it at its end and at its launch%s", f.in("host-kernel-write-waits"))
			}
		case hasReduction(sc):
			say("why copy engines for a %s: the copies need no SM, and the add's SM time is the same next to the GEMM or after it%s", what, f.in("add-kernel-memory"))
		default:
			say("why copy engines: the %s is a pure copy and needs no SM; at small messages their setup and synchronization outweigh what they save%s", what, f.join(" (", "dma-small-messages", ")"))
		}
	case scenarios.EngineNCCLCE:
		say("why NCCL's copy-engine path: the %s's data moves without SMs, and NCCL keeps its own synchronization", what)
	case scenarios.EngineP2PLoad:
		say("why load the peers' blocks: the %s's kernel reads them over NVLink and adds them in one pass, with no staging copy before the add, on %s; the model's per-CTA NVLink load rate is an estimate no GPU run has measured yet", what, p2pCTAs(st))
	}
	if st.ComputeSMs > 0 {
		say("why confine the GEMM to %d SMs: the add starts on the SMs it leaves as soon as the copies land, not when the GEMM ends%s", st.ComputeSMs, f.in("gemm-partition-for-add"))
	}
	if st.CommSMs > 0 && st.ComputeSMs == 0 {
		if memBound {
			say("why a %d-SM partition for the %s: the compute op is memory-bound, so the SMs it gives up cost it little", st.CommSMs, what)
		} else {
			say("why a %d-SM partition for the %s: it keeps its SMs from the start; the GEMM loses speed in proportion to the SMs it gives up%s, and the model finds the trade worth it here", st.CommSMs, what, f.in("partition-cost"))
		}
	}
	if st.CommCTAs > 0 {
		say("why cap the %s at %d CTAs: it then leaves the GEMM more SMs, at the cost of its own speed", what, st.CommCTAs)
	}
	if st.Decompose > 1 {
		say("why cut the dependent ops into %d chunks: chunk i of the consumer starts as soon as chunk i has arrived, so the pair overlaps with itself", st.Decompose)
	}
	if memBound {
		say("the compute op is memory-bound: both ops share HBM, so the ideal speedup may be out of physical reach; judge the result against the bound")
	}
	return out
}

// p2pCTAs words the CTAs a p2p-load kernel runs on under st (as
// backends/cuda sizes its grid).
func p2pCTAs(st scenarios.Strategy) string {
	switch {
	case st.CommCTAs > 0:
		return fmt.Sprintf("at most %d CTAs", st.CommCTAs)
	case st.CommSMs > 0:
		return fmt.Sprintf("its %d-SM partition, so a GEMM holding the other SMs does not delay it", st.CommSMs)
	}
	return "a few dozen CTAs"
}
