// Package launch tells whether c3lab was started by a launcher (mpirun,
// an MPICH-style mpiexec, srun or torchrun) and, if so, which rank this
// process is: its rank and the world's size, its rank and the rank count
// on its node, and where rank 0's store listens.
//
// It reads the environment only; nothing here opens a socket or a
// library. Without a launcher's variables Detect reports a single process,
// and c3lab runs exactly as it does without one.
package launch

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Launcher names what started the process.
type Launcher string

// The launchers Detect recognises.
const (
	// None is a process started by hand (or a launcher of one process).
	None Launcher = ""
	// OpenMPI is Open MPI's mpirun (OMPI_COMM_WORLD_*).
	OpenMPI Launcher = "mpirun"
	// MPICH is an MPICH-style mpiexec (Hydra: MPICH, Intel MPI,
	// MVAPICH), which sets PMI_RANK and PMI_SIZE.
	MPICH Launcher = "mpiexec"
	// Slurm is srun (SLURM_PROCID and a job step's SLURM_STEP_*).
	Slurm Launcher = "srun"
	// Torchrun is torchrun or anything that sets its variables (RANK,
	// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT).
	Torchrun Launcher = "torchrun"
)

// MPI reports whether the launcher also offers MPI (the NCCL id and
// rank 0's address can go through MPI_Bcast).
func (l Launcher) MPI() bool { return l == OpenMPI || l == MPICH }

// Env is what the launcher says about this process.
type Env struct {
	Launcher Launcher
	// Rank is this process's rank, 0..WorldSize-1.
	Rank int
	// WorldSize is the number of processes of the job.
	WorldSize int
	// LocalRank is this process's rank among those on its node (the GPU
	// it binds to when each process drives one GPU), 0..LocalWorldSize-1.
	LocalRank int
	// LocalWorldSize is the number of processes on this node; 1 when each
	// node runs one process that drives all of its GPUs. A launcher that
	// does not say is taken to run every rank on one node.
	LocalWorldSize int
	// MasterAddr and MasterPort are where rank 0's store listens; empty
	// and 0 when the launcher does not say (under mpirun rank 0 then
	// picks a port and sends its address through MPI).
	MasterAddr string
	MasterPort int
	// PortFrom names where MasterPort came from (a variable, or how it was
	// derived), for messages.
	PortFrom string
}

// Distributed reports whether there is more than one process to
// coordinate; a launcher of one process changes nothing.
func (e Env) Distributed() bool { return e.WorldSize > 1 }

// Store is MasterAddr:MasterPort, or "" when the launcher gave none.
func (e Env) Store() string {
	if e.MasterAddr == "" || e.MasterPort == 0 {
		return ""
	}
	return net.JoinHostPort(e.MasterAddr, strconv.Itoa(e.MasterPort))
}

// String describes the process in words: "rank 1 of 4 (local 1 of 2, torchrun)".
func (e Env) String() string {
	if e.Launcher == None {
		return "one process, no launcher"
	}
	return fmt.Sprintf("rank %d of %d (local %d of %d, %s)", e.Rank, e.WorldSize, e.LocalRank, e.LocalWorldSize, e.Launcher)
}

// Variables c3lab reads besides the launchers' own: C3LAB_MASTER_ADDR and
// C3LAB_MASTER_PORT override where rank 0's store listens (under torchrun
// with the agent's store, MASTER_PORT is torch's own store, so c3lab uses
// the next port unless C3LAB_MASTER_PORT says otherwise).
const (
	EnvMasterAddr = "C3LAB_MASTER_ADDR"
	EnvMasterPort = "C3LAB_MASTER_PORT"
)

// Error is an environment Detect cannot make sense of: the launcher, and
// what is wrong, in one line.
type Error struct {
	Launcher Launcher
	Msg      string
}

func (e *Error) Error() string {
	if e.Launcher == None {
		return "launcher environment: " + e.Msg
	}
	return fmt.Sprintf("%s environment: %s", e.Launcher, e.Msg)
}

// reader reads integer variables, keeping the first problem.
type reader struct {
	getenv func(string) string
	l      Launcher
	err    error
}

func (r *reader) has(name string) bool { return r.getenv(name) != "" }

// int reads name, which must be set and hold an integer >= min.
func (r *reader) int(name string, min int) int {
	if r.err != nil {
		return 0
	}
	s := strings.TrimSpace(r.getenv(name))
	if s == "" {
		r.err = &Error{r.l, name + " is not set; the launcher sets it for every process (set it, or start c3lab without a launcher)"}
		return 0
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < min {
		r.err = &Error{r.l, fmt.Sprintf("%s is %q; want an integer of at least %d", name, s, min)}
		return 0
	}
	return v
}

// intOr reads name like int when it is set, else returns def.
func (r *reader) intOr(name string, min, def int) int {
	if !r.has(name) {
		return def
	}
	return r.int(name, min)
}

// Detect reads the launcher's variables through getenv (os.Getenv, or a
// map in tests). It returns the Env of a single process (Launcher None,
// WorldSize 1) when no launcher's variables are set, and an *Error, one
// line naming the variables, when they contradict each other.
//
// The most specific launcher wins: Open MPI's per-process variables, then
// MPICH's PMI_RANK, then torchrun's RANK, then srun's job step. A job
// step's SLURM_* stay set under mpirun and torchrun started inside an
// allocation (and describe the step that started them), so they are read
// only when nothing more specific is set; RANK and WORLD_SIZE, when set
// next to an MPI launcher's variables, must agree with them.
func Detect(getenv func(string) string) (Env, error) {
	var e Env
	var err error
	switch {
	case getenv("OMPI_COMM_WORLD_RANK") != "" || getenv("OMPI_COMM_WORLD_SIZE") != "":
		e, err = openMPI(getenv)
	case getenv("PMI_RANK") != "" || getenv("PMI_SIZE") != "":
		e, err = mpich(getenv)
	case getenv("RANK") != "" || getenv("WORLD_SIZE") != "" || getenv("LOCAL_RANK") != "":
		e, err = torchrun(getenv)
	case getenv("SLURM_STEP_NUM_TASKS") != "" && getenv("SLURM_PROCID") != "":
		e, err = slurm(getenv)
	default:
		return Env{WorldSize: 1, LocalWorldSize: 1}, nil
	}
	if err != nil {
		return Env{}, err
	}
	if e.Launcher.MPI() {
		if err := agreesWithTorchVars(e, getenv); err != nil {
			return Env{}, err
		}
		// An MPI job may also name rank 0's address (as torchrun does).
		if err := masterFrom(&e, getenv, false); err != nil {
			return Env{}, err
		}
	}
	if err := overrides(&e, getenv); err != nil {
		return Env{}, err
	}
	return e, check(e)
}

func openMPI(getenv func(string) string) (Env, error) {
	r := reader{getenv: getenv, l: OpenMPI}
	e := Env{Launcher: OpenMPI}
	e.Rank = r.int("OMPI_COMM_WORLD_RANK", 0)
	e.WorldSize = r.int("OMPI_COMM_WORLD_SIZE", 1)
	e.LocalRank = r.intOr("OMPI_COMM_WORLD_LOCAL_RANK", 0, 0)
	e.LocalWorldSize = r.intOr("OMPI_COMM_WORLD_LOCAL_SIZE", 1, e.WorldSize)
	return e, r.err
}

func mpich(getenv func(string) string) (Env, error) {
	r := reader{getenv: getenv, l: MPICH}
	e := Env{Launcher: MPICH}
	e.Rank = r.int("PMI_RANK", 0)
	e.WorldSize = r.int("PMI_SIZE", 1)
	// Hydra's per-node variables (MPICH and Intel MPI set them).
	e.LocalRank = r.intOr("MPI_LOCALRANKID", 0, 0)
	e.LocalWorldSize = r.intOr("MPI_LOCALNRANKS", 1, e.WorldSize)
	return e, r.err
}

func torchrun(getenv func(string) string) (Env, error) {
	r := reader{getenv: getenv, l: Torchrun}
	e := Env{Launcher: Torchrun}
	e.Rank = r.int("RANK", 0)
	e.WorldSize = r.int("WORLD_SIZE", 1)
	e.LocalRank = r.intOr("LOCAL_RANK", 0, 0)
	e.LocalWorldSize = r.intOr("LOCAL_WORLD_SIZE", 1, e.WorldSize)
	if r.err != nil {
		return e, r.err
	}
	if e.WorldSize > 1 {
		if err := masterFrom(&e, getenv, true); err != nil {
			return e, err
		}
		// torchrun's agent may serve its own store on MASTER_PORT; the
		// workers then talk to it in torch's protocol, which c3lab does
		// not speak: c3lab's store takes the next port.
		if strings.EqualFold(getenv("TORCHELASTIC_USE_AGENT_STORE"), "true") && e.MasterPort < 65535 {
			e.MasterPort++
			e.PortFrom = "MASTER_PORT+1 (MASTER_PORT is torchrun's agent store)"
		}
	}
	return e, nil
}

func slurm(getenv func(string) string) (Env, error) {
	r := reader{getenv: getenv, l: Slurm}
	e := Env{Launcher: Slurm}
	e.Rank = r.int("SLURM_PROCID", 0)
	e.WorldSize = r.int("SLURM_STEP_NUM_TASKS", 1)
	e.LocalRank = r.intOr("SLURM_LOCALID", 0, 0)
	node := r.intOr("SLURM_NODEID", 0, 0)
	if r.err != nil {
		return e, r.err
	}
	e.LocalWorldSize = e.WorldSize
	if tpn := getenv("SLURM_STEP_TASKS_PER_NODE"); tpn != "" {
		counts, err := TasksPerNode(tpn)
		if err != nil {
			return e, &Error{Slurm, "SLURM_STEP_TASKS_PER_NODE: " + err.Error()}
		}
		if node >= len(counts) {
			return e, &Error{Slurm, fmt.Sprintf("SLURM_NODEID is %d but SLURM_STEP_TASKS_PER_NODE %q lists %d nodes", node, tpn, len(counts))}
		}
		e.LocalWorldSize = counts[node]
	}
	if err := masterFrom(&e, getenv, false); err != nil {
		return e, err
	}
	if e.MasterAddr == "" {
		if list := getenv("SLURM_STEP_NODELIST"); list != "" {
			host, err := FirstHost(list)
			if err != nil {
				return e, &Error{Slurm, "SLURM_STEP_NODELIST: " + err.Error()}
			}
			e.MasterAddr = host
		}
	}
	if e.MasterPort == 0 {
		// A port every task of the job derives alike, from the job id.
		if id, err := strconv.Atoi(getenv("SLURM_JOB_ID")); err == nil && id >= 0 {
			e.MasterPort = 20000 + id%20000
			e.PortFrom = "20000 + SLURM_JOB_ID % 20000"
		}
	}
	return e, nil
}

// masterFrom reads MASTER_ADDR and MASTER_PORT; required makes both
// mandatory (torchrun always sets them).
func masterFrom(e *Env, getenv func(string) string, required bool) error {
	addr, port := strings.TrimSpace(getenv("MASTER_ADDR")), strings.TrimSpace(getenv("MASTER_PORT"))
	if required && (addr == "" || port == "") {
		return &Error{e.Launcher, "MASTER_ADDR and MASTER_PORT must both be set (rank 0's store listens there)"}
	}
	if addr != "" {
		e.MasterAddr = addr
	}
	if port != "" {
		p, err := parsePort("MASTER_PORT", port)
		if err != nil {
			return &Error{e.Launcher, err.Error()}
		}
		e.MasterPort, e.PortFrom = p, "MASTER_PORT"
	}
	return nil
}

// overrides applies C3LAB_MASTER_ADDR and C3LAB_MASTER_PORT.
func overrides(e *Env, getenv func(string) string) error {
	if a := strings.TrimSpace(getenv(EnvMasterAddr)); a != "" {
		e.MasterAddr = a
	}
	if p := strings.TrimSpace(getenv(EnvMasterPort)); p != "" {
		v, err := parsePort(EnvMasterPort, p)
		if err != nil {
			return &Error{e.Launcher, err.Error()}
		}
		e.MasterPort, e.PortFrom = v, EnvMasterPort
	}
	return nil
}

func parsePort(name, s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%s is %q; want a port number 1..65535", name, s)
	}
	return p, nil
}

// agreesWithTorchVars refuses RANK or WORLD_SIZE set next to an MPI
// launcher's variables with other values: two launchers, or a stale
// export, and no way to tell which one is right.
func agreesWithTorchVars(e Env, getenv func(string) string) error {
	for _, v := range []struct {
		name, mine string
		want       int
	}{
		{"RANK", rankVar(e.Launcher), e.Rank},
		{"WORLD_SIZE", sizeVar(e.Launcher), e.WorldSize},
	} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		if n, err := strconv.Atoi(s); err != nil || n != v.want {
			return &Error{e.Launcher, fmt.Sprintf("%s is %q but %s is %d: two launchers disagree (unset %s, or start c3lab with one launcher)", v.name, s, v.mine, v.want, v.name)}
		}
	}
	return nil
}

func rankVar(l Launcher) string {
	if l == OpenMPI {
		return "OMPI_COMM_WORLD_RANK"
	}
	return "PMI_RANK"
}

func sizeVar(l Launcher) string {
	if l == OpenMPI {
		return "OMPI_COMM_WORLD_SIZE"
	}
	return "PMI_SIZE"
}

// check refuses ranks outside the world.
func check(e Env) error {
	switch {
	case e.Rank >= e.WorldSize:
		return &Error{e.Launcher, fmt.Sprintf("rank %d is not below the world size %d", e.Rank, e.WorldSize)}
	case e.LocalRank >= e.LocalWorldSize:
		return &Error{e.Launcher, fmt.Sprintf("local rank %d is not below the node's rank count %d", e.LocalRank, e.LocalWorldSize)}
	case e.LocalWorldSize > e.WorldSize:
		return &Error{e.Launcher, fmt.Sprintf("the node's rank count %d is above the world size %d", e.LocalWorldSize, e.WorldSize)}
	}
	return nil
}

// TasksPerNode expands Slurm's tasks-per-node list ("2(x3),1" is 2, 2, 2,
// 1) into one count per node.
func TasksPerNode(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		count, rep := part, "1"
		if i := strings.IndexByte(part, '('); i >= 0 {
			if !strings.HasPrefix(part[i:], "(x") || !strings.HasSuffix(part, ")") {
				return nil, fmt.Errorf("%q: want N or N(xK)", part)
			}
			count, rep = part[:i], part[i+2:len(part)-1]
		}
		n, err1 := strconv.Atoi(count)
		k, err2 := strconv.Atoi(rep)
		if err1 != nil || err2 != nil || n < 1 || k < 1 {
			return nil, fmt.Errorf("%q: want N or N(xK) with N, K at least 1", part)
		}
		if len(out)+k > 1<<16 {
			return nil, errors.New("more than 65536 nodes")
		}
		for range k {
			out = append(out, n)
		}
	}
	return out, nil
}

// FirstHost returns the first host of a Slurm node list: "gpu[07-09,12],cpu1"
// gives "gpu07".
func FirstHost(list string) (string, error) {
	list = strings.TrimSpace(list)
	end := len(list)
	if i := strings.IndexAny(list, ",["); i >= 0 {
		end = i
	}
	prefix := list[:end]
	if end == len(list) || list[end] == ',' {
		if !hostName(prefix) {
			return "", fmt.Errorf("%q: no host name first", list)
		}
		return prefix, nil
	}
	// A range list: take its first number, zero padding kept.
	rest := list[end+1:]
	close := strings.IndexByte(rest, ']')
	if close < 0 {
		return "", fmt.Errorf("%q: '[' without ']'", list)
	}
	first := rest[:close]
	if i := strings.IndexAny(first, ",-"); i >= 0 {
		first = first[:i]
	}
	if first == "" || strings.Trim(first, "0123456789") != "" {
		return "", fmt.Errorf("%q: want digits in the range list", list)
	}
	// A suffix after the brackets ("n[1-2]-ib") belongs to every host.
	suffix := rest[close+1:]
	if i := strings.IndexAny(suffix, ",["); i >= 0 {
		if suffix[i] == '[' {
			return "", fmt.Errorf("%q: more than one range in a host name is not supported; set MASTER_ADDR", list)
		}
		suffix = suffix[:i]
	}
	if prefix == "" && suffix == "" || !hostName(prefix+first+suffix) {
		return "", fmt.Errorf("%q: no host name first", list)
	}
	return prefix + first + suffix, nil
}

// hostName reports whether s can be a host name: letters, digits, '-',
// '.' and '_'.
func hostName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}
