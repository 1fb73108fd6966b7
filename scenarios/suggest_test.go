package scenarios

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	fields := []string{"launch", "comm_priority", "comm_sms", "compute_sms", "comm_ctas", "gemm_sm_target", "comm_engine", "copy_engines", "chunk_bytes"}
	names := []string{"llama3-70b-tp8-qkv-ag-224m", "llama3-70b-fsdp2-ffn-up-ag-224m", "llama3-405b-tp8-qkv-ag-224m", "gpt3-175b-tp8-qkv-ag-84m", "mixtral-8x22b-ep2-router-a2a-192m"}
	tests := []struct {
		name       string
		query      string
		candidates []string
		n          int
		want       []string
	}{
		{"one typo", "comm_smz", fields, 1, []string{"comm_sms"}},
		{"swapped letters", "luanch", fields, 3, []string{"launch"}},
		{"missing letter", "chunk_byte", fields, 1, []string{"chunk_bytes"}},
		{"case ignored", "LAUNCH", fields, 3, []string{"launch"}},
		{"punctuation ignored", "comm-sms", fields, 1, []string{"comm_sms"}},
		{"substring, shortest first", "qkv-ag", names, 3, []string{"gpt3-175b-tp8-qkv-ag-84m", "llama3-70b-tp8-qkv-ag-224m", "llama3-405b-tp8-qkv-ag-224m"}},
		{"query contains a candidate", "use launch now", fields, 1, []string{"launch"}},
		{"characters in order", "llama70b-ag", names, 3, []string{"llama3-70b-tp8-qkv-ag-224m", "llama3-70b-fsdp2-ffn-up-ag-224m"}},
		{"substring beats subsequence", "router", names, 3, []string{"mixtral-8x22b-ep2-router-a2a-192m"}},
		{"nothing close", "xyzzy", fields, 3, []string{}},
		{"one letter is no substring", "a", []string{"name"}, 3, []string{}},
		{"limit", "comm", fields, 2, []string{"comm_sms", "comm_ctas"}},
		{"n of zero", "launch", fields, 0, nil},
		{"empty query", "", fields, 3, nil},
		{"duplicate candidates", "launch", []string{"launch", "launch"}, 3, []string{"launch"}},
		{"no candidates", "launch", nil, 3, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Closest(tt.query, tt.candidates, tt.n)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Closest(%q, %d) = %q, want %q", tt.query, tt.n, got, tt.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"abc", "abc", 0},
		{"kitten", "sitting", 3},
		{"ab", "ba", 1},
		{"launch", "luanch", 1},
		{"comm_sms", "comm_smz", 1},
		{"ca", "abc", 3}, // optimal string alignment edits no substring twice
		{"héllo", "hello", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetry)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestIsSubsequence(t *testing.T) {
	tests := []struct {
		q, s string
		want bool
	}{
		{"", "abc", true},
		{"ac", "abc", true},
		{"ca", "abc", false},
		{"llama70b-ag", "llama3-70b-tp8-qkv-ag-224m", true},
		{"abcd", "abc", false},
	}
	for _, tt := range tests {
		if got := isSubsequence(tt.q, tt.s); got != tt.want {
			t.Errorf("isSubsequence(%q, %q) = %v, want %v", tt.q, tt.s, got, tt.want)
		}
	}
}
