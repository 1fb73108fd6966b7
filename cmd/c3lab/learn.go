package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/scenarios/learn"
	"github.com/c3lab/c3lab/tui"
)

// lessonFiles is --file, given once per lesson file.
type lessonFiles []string

func (f *lessonFiles) String() string { return strings.Join(*f, ",") }

func (f *lessonFiles) Set(v string) error {
	*f = append(*f, v)
	return nil
}

func runLearn(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("learn", "[--list [--json]] [--lesson N] [--reset [N]] [--backend auto|sim|cuda] [--file lesson.yaml ...]", s)
	var (
		backend backendFlag
		files   lessonFiles
		list    = fs.Bool("list", false, "list the lessons with your progress: done or skipped, your predictions against the answers")
		asJSON  = fs.Bool("json", false, "with --list, print the lessons and your progress as JSON")
		lesson  = fs.String("lesson", "", "open this lesson: its number (from 1) or its name; default the first not done")
		reset   = fs.Bool("reset", false, "forget your progress: all of it, or lesson N's alone when N follows (--reset 3)")
	)
	backend.register(fs)
	fs.Var(&files, "file", "teach this lesson file (YAML, like scenarios/learn/lessons/*.yaml) instead of the built-in lessons; repeat for several")
	if err := parseFlagsAllowingArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 && (!*reset || fs.NArg() > 1) {
		return badInput("unexpected argument %q (c3lab learn --help lists the flags)", fs.Arg(fs.NArg()-1))
	}
	if *asJSON && !*list {
		return badInput("--json goes with --list; the lessons themselves need a terminal")
	}
	path, err := learn.StatePath()
	if err != nil {
		return err
	}
	refs, err := learn.CommittedH200()
	if err != nil {
		return err
	}
	// Lessons are about an H200 and checked on its limits, whatever the
	// backend; what this backend cannot run says so when the learner runs
	// it. They are checked before anything else, so a broken lesson file
	// or lesson name says so even off a terminal.
	lim := sim.New(sim.DefaultProfile()).Capabilities().Limits
	lessons, err := loadLessons(files, lim, refs)
	if err != nil {
		return err
	}
	if *reset {
		return resetProgress(s.out, path, lessons, fs.Args())
	}
	prog, err := learn.LoadProgress(path)
	if err != nil {
		return err
	}
	if *list {
		return listLessons(s.out, lessons, prog, lim, *asJSON)
	}
	start := prog.Next(lessons)
	if *lesson != "" {
		if start, err = learn.Find(lessons, *lesson); err != nil {
			return usageError{err}
		}
	}
	if !s.terminal {
		return badInput("the lessons need a terminal; c3lab learn --list shows them and your progress")
	}
	b, note, err := backend.open()
	if err != nil {
		return err
	}
	defer b.Close()
	note = strings.TrimPrefix(note+"; "+lessonsLeftOut(b, lessons), "; ")
	save := func(p learn.Progress) error { return learn.SaveProgress(path, p) }
	return tui.RunLearn(ctx, tui.LearnConfig{Backend: b, Lessons: lessons, Progress: prog, Save: save, H200: refs, Start: start, Note: note,
		Advisor: labAdvisor(backend, b.Capabilities())})
}

// lessonsLeftOut says how many lessons need more GPUs than the backend has ("").
func lessonsLeftOut(b backends.Backend, lessons []learn.Lesson) string {
	have := b.Capabilities().Limits.MaxGPUs
	n := 0
	for _, l := range lessons {
		if have > 0 && l.Scenario.GPUs > have {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d lessons need more GPUs than this node has; --backend sim runs them", n)
}

// loadLessons are the built-in lessons, or the files given, validated on
// lim; a bad file is a usage error naming its lines.
func loadLessons(files []string, lim scenarios.Limits, refs learn.Refs) ([]learn.Lesson, error) {
	if len(files) == 0 {
		ls, err := learn.Builtin(lim, refs)
		if err != nil {
			return nil, fmt.Errorf("the built-in lessons: %w", err)
		}
		return ls, nil
	}
	var out []learn.Lesson
	var errs []error
	for _, f := range files {
		l, err := learn.Load(f, lim, refs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, l)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, usageError{err}
	}
	return out, nil
}

// resetProgress forgets the progress of the lesson args names, or of all.
func resetProgress(w io.Writer, path string, lessons []learn.Lesson, args []string) error {
	if len(args) == 0 {
		if err := learn.SaveProgress(path, learn.NewProgress()); err != nil {
			return err
		}
		fmt.Fprintf(w, "c3lab learn: progress reset (%s)\n", path)
		return nil
	}
	i, err := learn.Find(lessons, args[0])
	if err != nil {
		return usageError{err}
	}
	prog, err := learn.LoadProgress(path)
	if err != nil {
		return err
	}
	if err := learn.SaveProgress(path, prog.Without(lessons[i].ID)); err != nil {
		return err
	}
	fmt.Fprintf(w, "c3lab learn: lesson %d (%s) reset\n", i+1, lessons[i].Title)
	return nil
}

// lessonRow is one lesson of --list --json.
type lessonRow struct {
	Number   int    `json:"number"`
	ID       string `json:"id"`
	Title    string `json:"title"`
	Scenario string `json:"scenario"`
	Figure   string `json:"figure"`
	// From and To are the strategies the knob flips between, on the
	// simulated H200 (From absent: the ops one after the other).
	From       *scenarios.Strategy `json:"from,omitempty"`
	To         *scenarios.Strategy `json:"to,omitempty"`
	State      string              `json:"state"`
	Prediction *float64            `json:"prediction,omitempty"`
	Answer     *float64            `json:"answer,omitempty"`
	Backend    string              `json:"backend,omitempty"`
}

// listLessons prints the lessons with the learner's progress.
func listLessons(w io.Writer, lessons []learn.Lesson, prog learn.Progress, lim scenarios.Limits, asJSON bool) error {
	rows := make([]lessonRow, len(lessons))
	for i, l := range lessons {
		r := prog.Of(l.ID)
		state := string(r.State)
		if state == "" {
			state = "new"
		}
		rows[i] = lessonRow{Number: i + 1, ID: l.ID, Title: l.Title, Scenario: l.Scenario.Name, Figure: string(l.Figure), State: state, Prediction: r.Prediction, Answer: r.Answer, Backend: r.Backend}
		if to, err := l.To.Resolve(lim); err == nil {
			rows[i].To = &to
		}
		if l.From != nil {
			if from, err := l.From.Resolve(lim); err == nil {
				rows[i].From = &from
			}
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSTATE\tLESSON\tYOU\tMEASURED")
	for i, r := range rows {
		you, got := "-", "-"
		if r.Prediction != nil && r.Answer != nil {
			f := lessons[i].Figure
			you, got = f.Format(*r.Prediction), f.Format(*r.Answer)
			if r.Backend != "" {
				got += " (" + r.Backend + ")"
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.Number, r.State, r.Title, you, got)
	}
	return tw.Flush()
}
