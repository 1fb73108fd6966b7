package launch

import (
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Env
		err  string // a part of the error; "" for none
	}{
		{name: "no launcher", env: map[string]string{"HOME": "/root", "PATH": "/bin"},
			want: Env{WorldSize: 1, LocalWorldSize: 1}},
		{name: "a batch step of slurm is not a launcher", env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_JOB_ID": "7"},
			want: Env{WorldSize: 1, LocalWorldSize: 1}},
		{name: "mpirun", env: map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"},
			want: Env{Launcher: OpenMPI, Rank: 3, WorldSize: 4, LocalRank: 1, LocalWorldSize: 2}},
		{name: "mpirun with MASTER_ADDR", env: map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "MASTER_ADDR": "n1", "MASTER_PORT": "29500"},
			want: Env{Launcher: OpenMPI, WorldSize: 2, LocalWorldSize: 2, MasterAddr: "n1", MasterPort: 29500, PortFrom: "MASTER_PORT"}},
		{name: "mpirun inside an allocation ignores the step", env: map[string]string{"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "4", "SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "2"},
			want: Env{Launcher: OpenMPI, Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4}},
		{name: "mpich", env: map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"},
			want: Env{Launcher: MPICH, Rank: 1, WorldSize: 2, LocalRank: 1, LocalWorldSize: 2}},
		{name: "torchrun", env: map[string]string{"RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"},
			want: Env{Launcher: Torchrun, Rank: 2, WorldSize: 4, LocalWorldSize: 2, MasterAddr: "10.0.0.1", MasterPort: 29500, PortFrom: "MASTER_PORT"}},
		{name: "torchrun with the agent store", env: map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "29500", "TORCHELASTIC_USE_AGENT_STORE": "True"},
			want: Env{Launcher: Torchrun, WorldSize: 2, LocalWorldSize: 2, MasterAddr: "h", MasterPort: 29501, PortFrom: "MASTER_PORT+1 (MASTER_PORT is torchrun's agent store)"}},
		{name: "torchrun of one process", env: map[string]string{"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"},
			want: Env{Launcher: Torchrun, WorldSize: 1, LocalWorldSize: 1}},
		{name: "c3lab's own port wins", env: map[string]string{"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "29500", EnvMasterPort: "31000", EnvMasterAddr: "127.0.0.1"},
			want: Env{Launcher: Torchrun, Rank: 1, WorldSize: 2, LocalRank: 0, LocalWorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: 31000, PortFrom: EnvMasterPort}},
		{name: "srun", env: map[string]string{"SLURM_PROCID": "5", "SLURM_STEP_NUM_TASKS": "8", "SLURM_LOCALID": "1", "SLURM_NODEID": "1", "SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_STEP_NODELIST": "gpu[07-08]", "SLURM_JOB_ID": "123456"},
			want: Env{Launcher: Slurm, Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4, MasterAddr: "gpu07", MasterPort: 20000 + 123456%20000, PortFrom: "20000 + SLURM_JOB_ID % 20000"}},
		{name: "srun with MASTER_*", env: map[string]string{"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "2", "SLURM_STEP_TASKS_PER_NODE": "1,1", "SLURM_NODEID": "0", "MASTER_ADDR": "m", "MASTER_PORT": "1234", "SLURM_STEP_NODELIST": "a,b"},
			want: Env{Launcher: Slurm, WorldSize: 2, LocalWorldSize: 1, MasterAddr: "m", MasterPort: 1234, PortFrom: "MASTER_PORT"}},

		{name: "rank past the world", env: map[string]string{"RANK": "4", "WORLD_SIZE": "4", "MASTER_ADDR": "h", "MASTER_PORT": "1"},
			err: "torchrun environment: rank 4 is not below the world size 4"},
		{name: "world size zero", env: map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "0"},
			err: `mpirun environment: OMPI_COMM_WORLD_SIZE is "0"; want an integer of at least 1`},
		{name: "rank not a number", env: map[string]string{"PMI_RANK": "one", "PMI_SIZE": "2"},
			err: `mpiexec environment: PMI_RANK is "one"`},
		{name: "size missing", env: map[string]string{"OMPI_COMM_WORLD_RANK": "0"},
			err: "mpirun environment: OMPI_COMM_WORLD_SIZE is not set"},
		{name: "torchrun without WORLD_SIZE", env: map[string]string{"RANK": "0"},
			err: "torchrun environment: WORLD_SIZE is not set"},
		{name: "torchrun without MASTER_PORT", env: map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h"},
			err: "MASTER_ADDR and MASTER_PORT must both be set"},
		{name: "bad port", env: map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "70000"},
			err: `MASTER_PORT is "70000"; want a port number 1..65535`},
		{name: "local rank past the node", env: map[string]string{"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"},
			err: "local rank 2 is not below the node's rank count 2"},
		{name: "node larger than the world", env: map[string]string{"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4", "MASTER_ADDR": "h", "MASTER_PORT": "1"},
			err: "the node's rank count 4 is above the world size 2"},
		{name: "two launchers disagree", env: map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "RANK": "0"},
			err: `mpirun environment: RANK is "0" but OMPI_COMM_WORLD_RANK is 1: two launchers disagree`},
		{name: "world sizes disagree", env: map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2", "WORLD_SIZE": "4"},
			err: `WORLD_SIZE is "4" but PMI_SIZE is 2`},
		{name: "slurm node past its list", env: map[string]string{"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "2", "SLURM_NODEID": "2", "SLURM_STEP_TASKS_PER_NODE": "1,1"},
			err: `srun environment: SLURM_NODEID is 2 but SLURM_STEP_TASKS_PER_NODE "1,1" lists 2 nodes`},
		{name: "slurm bad tasks per node", env: map[string]string{"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "2", "SLURM_STEP_TASKS_PER_NODE": "2(3)"},
			err: "SLURM_STEP_TASKS_PER_NODE: \"2(3)\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect(envOf(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is more than one line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// Without a launcher nothing is distributed, and a launcher of one
// process changes nothing either.
func TestDistributed(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"RANK": "0", "WORLD_SIZE": "1"}, false},
		{map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "9"}, true},
	} {
		e, err := Detect(envOf(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if e.Distributed() != tc.want {
			t.Errorf("%v: Distributed %v, want %v", tc.env, e.Distributed(), tc.want)
		}
	}
}

func TestTasksPerNode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"4", []int{4}, false},
		{"2(x3),1", []int{2, 2, 2, 1}, false},
		{"1,8(x2)", []int{1, 8, 8}, false},
		{"", nil, true},
		{"2(x0)", nil, true},
		{"2(x", nil, true},
		{"x", nil, true},
		{"0", nil, true},
		{"1(x99999999)", nil, true},
	} {
		got, err := TasksPerNode(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q: error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if !tc.err && !equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFirstHost(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"node1", "node1"},
		{"node1,node2", "node1"},
		{"gpu[07-09,12],cpu1", "gpu07"},
		{"gpu[3,5]", "gpu3"},
		{"n[001-004]-ib", "n001-ib"},
		{"n[1-2]-ib,m3", "n1-ib"},
		{"", ""},
		{"gpu[", ""},
		{"gpu[a-b]", ""},
		{"[1-2]", ""},
		{"]", ""},
		{"a b", ""},
		{"[]", ""},
		{",a", ""},
		{"r[1-2]c[3-4]", ""},
	} {
		got, err := FirstHost(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// The two parsers of Slurm's lists never panic, and what they accept is
// sane: counts at least 1, a host name with no list syntax left in it.
func FuzzTasksPerNode(f *testing.F) {
	for _, s := range []string{"4", "2(x3),1", "1,8(x2)", "", "2(x", "(x)", "3(x2)(x2)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		counts, err := TasksPerNode(s)
		if err != nil {
			return
		}
		if len(counts) == 0 {
			t.Fatalf("%q: no error and no nodes", s)
		}
		for _, c := range counts {
			if c < 1 {
				t.Fatalf("%q: count %d", s, c)
			}
		}
	})
}

func FuzzFirstHost(f *testing.F) {
	for _, s := range []string{"node1", "gpu[07-09,12],cpu1", "n[001-004]-ib", "[", "]", "a[1-2]b[3]", ","} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := FirstHost(s)
		if err != nil {
			return
		}
		if !hostName(h) {
			t.Fatalf("%q: host %q", s, h)
		}
	})
}
