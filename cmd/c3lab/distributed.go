package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/c3lab/c3lab/backends/dist/group"
	"github.com/c3lab/c3lab/backends/dist/launch"
	"github.com/c3lab/c3lab/backends/dist/mpiboot"
	"github.com/c3lab/c3lab/backends/dist/store"
	"github.com/c3lab/c3lab/recordings/outfile"
)

// A command under a launcher (mpirun, mpiexec, srun, torchrun): every
// rank runs it; rank 0 serves the store the ranks meet at, lets them all
// through one start gate, gathers what each printed and wrote, and
// reports for all; the other ranks run headless and print nothing unless
// they fail. A rank lost midway stops every other within seconds, each
// saying which rank it was. Without a launcher the command runs as it
// always did (distributed calls it straight away).

// rankFiles describes a command's flags that name output files: under a
// launcher the other ranks write theirs to a scratch folder and rank 0
// writes them next to its own, as NAME.rankR.EXT.
type rankFiles struct {
	flag, force string
	// defaultPath, when not nil, names the file the command writes when
	// the flag is not given (the ranks must not pick the same one).
	defaultPath func(now time.Time) string
}

// distOutputs lists, per command, its output-file flags.
var distOutputs = map[string][]rankFiles{
	// The lab: rank 0 records every rank's results, rank R's to
	// NAME.rankR.EXT (labranks.go); the paths are checked before it opens.
	"lab": {{flag: "record", force: "record-overwrite"}},
	"run": {{flag: "record", force: "record-overwrite"}},
	"sweep": {
		{flag: "out", force: "force", defaultPath: func(now time.Time) string {
			return outfile.Unused("c3lab-sweep-" + now.Format("20060102-150405") + ".json")
		}},
		{flag: "record", force: "record-overwrite"},
	},
}

// envJoinTimeout bounds the wait for every rank to join (and a rank's
// attempts to reach rank 0); store.DefaultJoin when unset.
const envJoinTimeout = "C3LAB_JOIN_TIMEOUT"

// envRankTimeout is how long a rank may say nothing before it is taken
// for hung; store.DefaultSilence when unset.
const envRankTimeout = "C3LAB_RANK_TIMEOUT"

// distOptions tune the multi-process path; tests shorten them.
type distOptions struct {
	getenv func(string) string
	store  store.Options
	// grace is how long the command may take to stop after the group
	// failed before the process leaves without it.
	grace time.Duration
	exit  func(code int)
}

func defaultDistOptions() distOptions {
	return distOptions{getenv: os.Getenv, grace: 10 * time.Second, exit: os.Exit}
}

// distributed wraps a command: without a launcher it is the command
// itself; under one, every rank runs it as described above.
func distributed(name string, run func(context.Context, []string, stdio) error) func(context.Context, []string, stdio) error {
	return func(ctx context.Context, args []string, s stdio) error {
		return runDistributed(ctx, name, run, args, s, defaultDistOptions())
	}
}

func runDistributed(ctx context.Context, name string, run func(context.Context, []string, stdio) error, args []string, s stdio, o distOptions) error {
	env, err := launch.Detect(o.getenv)
	if err != nil {
		return usageError{err}
	}
	if !env.Distributed() || wantsHelp(args) {
		return run(ctx, args, s)
	}
	// Several ranks on a node run the cuda backend one process per GPU:
	// each opens its local rank's GPU (backendFlag.cudaOptions).
	for _, v := range []struct {
		name string
		to   *time.Duration
	}{{envJoinTimeout, &o.store.Join}, {envRankTimeout, &o.store.Silence}} {
		if s := o.getenv(v.name); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return badInput("%s is %q; want a duration such as 90s or 5m", v.name, s)
			}
			*v.to = d
		}
	}
	r := &rankRun{name: name, env: env, args: args, s: s, o: o, started: time.Now()}
	return r.do(ctx, run)
}

func wantsHelp(args []string) bool {
	for _, a := range args {
		if isHelp(a) {
			return true
		}
	}
	return false
}

// rankRun is one rank's run of a command.
type rankRun struct {
	name    string
	env     launch.Env
	args    []string
	s       stdio
	o       distOptions
	started time.Time
	g       *group.Group
	scratch string
	// files maps, for the other ranks, each scratch path to the flag it
	// stands for; on rank 0, each output flag to its path.
	files map[string]string
}

// rankReport is what each rank sends rank 0 when its command is done.
type rankReport struct {
	Rank      int    `json:"rank"`
	Host      string `json:"host"`
	PID       int    `json:"pid"`
	LocalRank int    `json:"local_rank"`
	// Released is when the start gate let this rank go (Unix ns, its
	// host's clock).
	Released int64  `json:"released_unix_ns"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
	// Output is what the command printed on stdout: JSON with --json.
	Output json.RawMessage `json:"output,omitempty"`
	Text   string          `json:"text,omitempty"`
	Stderr string          `json:"stderr,omitempty"`
	// Files holds, per output flag, the file the rank wrote.
	Files map[string][]byte `json:"files,omitempty"`
}

func (r *rankRun) do(ctx context.Context, run func(context.Context, []string, stdio) error) error {
	opt := group.Options{Store: r.o.store}
	if r.env.Launcher.MPI() && r.env.Store() == "" {
		ch, err := mpiboot.Open(r.o.getenv(mpiboot.EnvLibrary))
		if err != nil {
			return fmt.Errorf("%s started %d ranks and named no MASTER_ADDR and MASTER_PORT, so rank 0's address must go through MPI, which cannot start: %w (set MASTER_ADDR and MASTER_PORT, or %s to libmpi's path)", r.env.Launcher, r.env.WorldSize, err, mpiboot.EnvLibrary)
		}
		opt.MPI = ch
	}
	g, err := group.Join(ctx, r.env, opt)
	if err != nil {
		if opt.MPI != nil {
			opt.MPI.Close()
		}
		return r.rankErr(err)
	}
	r.g = g
	defer g.Close()

	// Rank 0 checks where every rank's files go before anything runs,
	// and tells the others to go on or stop.
	args, err := r.prepareFiles()
	if r.scratch != "" {
		defer os.RemoveAll(r.scratch)
	}
	if r.env.Rank == 0 {
		verdict := "go"
		if err != nil {
			verdict = "stop"
		}
		if perr := g.Publish(ctx, []byte(verdict)); perr != nil && err == nil {
			err = perr
		}
		if err != nil {
			return err
		}
	} else {
		if err != nil {
			return r.rankErr(err)
		}
		v, err := g.Next(ctx)
		if err != nil {
			return r.rankErr(err)
		}
		if string(v) != "go" {
			return errRankZeroStopped
		}
	}

	released, err := g.StartGate(ctx, r.name)
	if err != nil {
		return r.rankErr(err)
	}
	var out, errOut bytes.Buffer
	sub := stdio{in: strings.NewReader(""), out: &out, errOut: &errOut}
	if r.env.Rank == 0 {
		sub.in, sub.errOut, sub.terminal = r.s.in, r.s.errOut, r.s.terminal
	}
	// The command finds the group in its context (the lab on rank 0
	// sends its requests through it; the others follow them).
	runErr := r.runUnderGroup(withJob(ctx, &job{g: g, parent: ctx}), run, args, sub)
	if gerr := g.Err(); gerr != nil {
		return r.rankErr(fmt.Errorf("stopped: %w", gerr))
	}
	rep := r.report(released, runErr, out.Bytes(), errOut.String())
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	all, err := g.Gather(ctx, "report", b)
	if err == nil {
		// Every rank leaves together: one lost before the end fails the
		// job on every rank, whichever had finished.
		err = g.Barrier(ctx, "done")
	}
	if err != nil {
		return r.rankErr(fmt.Errorf("stopped: %w", err))
	}
	if r.env.Rank != 0 {
		return runErr
	}
	reps := make([]rankReport, len(all))
	for i, b := range all {
		if err := json.Unmarshal(b, &reps[i]); err != nil {
			return fmt.Errorf("rank %d's report cannot be read: %w", i, err)
		}
	}
	return r.present(reps, runErr)
}

// errRankZeroStopped ends the other ranks quietly when rank 0 refused
// to start (it says why).
var errRankZeroStopped = errors.New("rank 0 stopped the job before it started (its output says why)")

// rankErr names this rank in an error of a rank other than 0 (their
// lines land in one log under most launchers).
func (r *rankRun) rankErr(err error) error {
	if r.env.Rank == 0 {
		return err
	}
	return fmt.Errorf("rank %d of %d: %w", r.env.Rank, r.env.WorldSize, err)
}

// runUnderGroup runs the command with a context that ends when the group
// fails. A command that does not stop within the grace after that is left
// behind: the process exits (its GPU memory goes with it).
func (r *rankRun) runUnderGroup(ctx context.Context, run func(context.Context, []string, stdio) error, args []string, sub stdio) error {
	gctx, cancel := r.g.Context(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(gctx, args, sub) }()
	select {
	case err := <-done:
		return err
	case <-r.g.Failed():
	}
	select {
	case err := <-done:
		return err
	case <-time.After(r.o.grace):
		fmt.Fprintf(r.s.errOut, "c3lab %s: %v; the %s did not stop within %s of it, leaving without it\n", r.name, r.rankErr(fmt.Errorf("stopped: %w", r.g.Err())), r.name, r.o.grace)
		r.o.exit(exitFailure)
		return r.g.Err()
	}
}

// report is this rank's report.
func (r *rankRun) report(released time.Time, runErr error, out []byte, errOut string) rankReport {
	host, _ := os.Hostname()
	rep := rankReport{Rank: r.env.Rank, Host: host, PID: os.Getpid(), LocalRank: r.env.LocalRank, Released: released.UnixNano(), Stderr: errOut}
	if runErr != nil {
		rep.ExitCode = exitFailure
		var ue usageError
		if errors.As(runErr, &ue) {
			rep.ExitCode = exitUsage
		}
		rep.Error = runErr.Error()
	}
	if json.Valid(out) && len(bytes.TrimSpace(out)) > 0 {
		rep.Output = out
	} else {
		rep.Text = string(out)
	}
	if r.env.Rank != 0 {
		for path, flag := range r.files {
			if b, err := os.ReadFile(path); err == nil {
				if rep.Files == nil {
					rep.Files = map[string][]byte{}
				}
				rep.Files[flag] = b
			}
		}
	}
	return rep
}

// prepareFiles returns the command's arguments for this rank: on the
// other ranks each output flag names a scratch file instead; on rank 0 a
// default output path is made explicit, and every rank's file is checked
// before the run.
func (r *rankRun) prepareFiles() ([]string, error) {
	args := r.args
	r.files = map[string]string{}
	for _, f := range distOutputs[r.name] {
		path, ok := flagValue(args, f.flag)
		if !ok && f.defaultPath == nil {
			continue
		}
		if !ok {
			path = f.defaultPath(r.started)
			if r.env.Rank == 0 {
				args = append(slicesClone(args), "--"+f.flag, path)
			}
		}
		if r.env.Rank == 0 {
			r.files[f.flag] = path
			force := boolFlag(args, f.force)
			for rank := 1; rank < r.env.WorldSize; rank++ {
				if err := outfile.Check(rankPath(path, rank), outfile.Options{Overwrite: force}); err != nil {
					return nil, badInput("rank %d's --%s: %v", rank, f.flag, err)
				}
			}
			continue
		}
		if r.scratch == "" {
			dir, err := os.MkdirTemp("", "c3lab-rank")
			if err != nil {
				return nil, fmt.Errorf("a scratch folder for rank %d's files: %w", r.env.Rank, err)
			}
			r.scratch = dir
		}
		scratch := filepath.Join(r.scratch, f.flag+filepath.Ext(path))
		r.files[scratch] = f.flag
		args = setFlag(args, f.flag, scratch)
	}
	return args, nil
}

// rankPath is where rank's file goes next to rank 0's path:
// "results.json" gives "results.rank1.json".
func rankPath(path string, rank int) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".rank" + strconv.Itoa(rank) + ext
}

// present prints, on rank 0, the job's results: rank 0's own output, then
// the start skew and each other rank's outcome (their output when it
// differs from rank 0's); with --json one document with every rank's.
// Each other rank's files are written next to rank 0's.
func (r *rankRun) present(reps []rankReport, own error) error {
	releases := make([]int64, len(reps))
	for i, rep := range reps {
		releases[i] = rep.Released
	}
	skew := group.Skew(releases)
	var written []string
	for _, rep := range reps[1:] {
		for flag, b := range rep.Files {
			path := rankPath(r.files[flag], rep.Rank)
			force := boolFlag(r.args, forceFlagOf(r.name, flag))
			err := outfile.WriteFile(path, outfile.Options{Overwrite: force}, func(w io.Writer) error {
				_, err := w.Write(b)
				return err
			})
			if err != nil {
				return fmt.Errorf("writing rank %d's --%s: %w", rep.Rank, flag, err)
			}
			written = append(written, fmt.Sprintf("rank %d's --%s to %s", rep.Rank, flag, path))
		}
	}
	var failed []string
	for _, rep := range reps[1:] {
		if rep.ExitCode != 0 {
			failed = append(failed, fmt.Sprintf("rank %d: %s", rep.Rank, rep.Error))
		}
	}
	if boolFlag(r.args, "json") {
		doc := struct {
			Launcher  launch.Launcher `json:"launcher"`
			WorldSize int             `json:"world_size"`
			SkewNanos int64           `json:"start_skew_ns"`
			Ranks     []rankReport    `json:"ranks"`
		}{r.env.Launcher, r.env.WorldSize, skew.Nanoseconds(), reps}
		for i := range doc.Ranks {
			doc.Ranks[i].Files, doc.Ranks[i].Stderr = nil, ""
		}
		if err := writeJSON(r.s.out, doc); err != nil {
			return err
		}
	} else {
		r.s.out.Write([]byte(reps[0].Text))
		fmt.Fprintf(r.s.out, "\nranks      %d (%s), start skew %s between the ranks' releases from the start gate (host clocks)\n", r.env.WorldSize, r.env.Launcher, skew)
		for _, rep := range reps[1:] {
			state := "done"
			if rep.ExitCode != 0 {
				state = "failed: " + rep.Error
			}
			same := ""
			if rep.ExitCode == 0 && rep.Text == reps[0].Text && bytes.Equal(rep.Output, reps[0].Output) {
				same = ", its output the same as rank 0's"
			}
			fmt.Fprintf(r.s.out, "rank %-5d %s, pid %d, local rank %d: %s%s\n", rep.Rank, rep.Host, rep.PID, rep.LocalRank, state, same)
			if same == "" {
				for line := range strings.SplitSeq(strings.TrimRight(rep.Text+string(rep.Output), "\n"), "\n") {
					if line != "" {
						fmt.Fprintf(r.s.out, "  %s\n", line)
					}
				}
			}
		}
	}
	if len(written) > 0 && !boolFlag(r.args, "json") {
		fmt.Fprintf(r.s.errOut, "c3lab: wrote %s\n", strings.Join(written, ", "))
	}
	if own != nil {
		return own
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d ranks failed; %s", len(failed), r.env.WorldSize, strings.Join(failed, "; "))
	}
	return nil
}

func forceFlagOf(cmd, flag string) string {
	for _, f := range distOutputs[cmd] {
		if f.flag == flag {
			return f.force
		}
	}
	return ""
}

// flagValue finds a string flag's value in args ("-name v", "--name v",
// "--name=v"); arguments after "--" are not flags.
func flagValue(args []string, name string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		n, v, hasV := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || n != name {
			continue
		}
		if hasV {
			return v, true
		}
		if i+1 < len(args) {
			return args[i+1], true
		}
		return "", false
	}
	return "", false
}

// boolFlag reports whether a boolean flag is set in args.
func boolFlag(args []string, name string) bool {
	if name == "" {
		return false
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		n, v, hasV := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && n == name {
			b, err := strconv.ParseBool(v)
			return !hasV || err == nil && b
		}
	}
	return false
}

// setFlag returns args with the string flag name set to v (replacing its
// value where it is given).
func setFlag(args []string, name, v string) []string {
	out := slicesClone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		n, _, hasV := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || n != name {
			continue
		}
		if hasV {
			out[i] = "--" + name + "=" + v
		} else if i+1 < len(out) {
			out[i+1] = v
		}
		return out
	}
	return append(out, "--"+name, v)
}

func slicesClone(a []string) []string { return append([]string(nil), a...) }
