package main

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		line string
		name string
		conc int
		ops  float64
		ok   bool
	}{
		{"pgbench c=8 tps=1234.5", "pgbench", 8, 1234.5, true},
		{"BenchmarkLedgerPost/store=postgres/accounts=spread/c=64-2 \t 3000\t 0 errors\t 5420 ops/s\t 2.3 p50_ms", "BenchmarkLedgerPost/store=postgres/accounts=spread/c=64", 64, 5420, true},
		{"BenchmarkStampVerify-2 \t 5000\t 78000 ns/op", "", 0, 0, false},
		{"PASS", "", 0, 0, false},
	} {
		name, conc, ops, ok := parse(c.line)
		if name != c.name || conc != c.conc || ops != c.ops || ok != c.ok {
			t.Errorf("parse(%q) = %q, %d, %v, %v; want %q, %d, %v, %v", c.line, name, conc, ops, ok, c.name, c.conc, c.ops, c.ok)
		}
	}
}

func TestDraw(t *testing.T) {
	var b strings.Builder
	err := draw(&b, map[string]map[int]float64{"pgbench (TPC-B-like)": {1: 1000, 8: 1200, 64: 500}, "ledger post, spread": {1: 400, 64: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if got := strings.Count(svg, "<circle"); got != 5 {
		t.Errorf("%d points drawn, want 5", got)
	}
	for _, want := range []string{"<svg", "pgbench (TPC-B-like) c=64: 500/s", "ledger post, spread c=64: 5000/s", "</svg>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	if err := draw(&b, nil); err == nil {
		t.Error("an empty chart is an error")
	}
}
