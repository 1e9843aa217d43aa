// Command benchchart draws make bench's throughput against concurrency as
// an SVG: pgbench and corridor's PostgreSQL operations (the ledger post,
// transfer-out, the quote round trip) at c=1, 8 and 64, so a reader sees
// the curves at a glance. It reads the benchmark outputs bench.sh saved
// (pgbench's "pgbench c=N tps=X" lines and go test's Benchmark lines).
//
//	go run ./scripts/benchchart -o bin/bench/throughput.svg OUT/*.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// series are the curves drawn, each from the benchmark names matching it.
var series = []struct {
	label, color string
	match        *regexp.Regexp
}{
	{"pgbench (TPC-B-like)", "#555555", regexp.MustCompile(`^pgbench$`)},
	{"ledger post, spread", "#1f77b4", regexp.MustCompile(`^BenchmarkLedgerPost/store=postgres/accounts=spread/c=\d+$`)},
	{"transfer-out (HTTP)", "#d62728", regexp.MustCompile(`^BenchmarkHTTPTransferOut/postgres/workers=off/c=\d+$`)},
	{"transfer-out, job loop", "#ff7f0e", regexp.MustCompile(`^BenchmarkHTTPTransferOut/postgres/workers=on/c=\d+$`)},
	{"quote create + execute", "#2ca02c", regexp.MustCompile(`^BenchmarkHTTPQuote/postgres/workers=off/c=\d+$`)},
}

var concurrencies = []int{1, 8, 64}

func main() {
	out := flag.String("o", "throughput.svg", "the SVG to write")
	flag.Parse()
	points := map[string]map[int]float64{}
	for _, path := range flag.Args() {
		if err := read(path, points); err != nil {
			fmt.Fprintln(os.Stderr, "benchchart:", err)
			os.Exit(1)
		}
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "benchchart:", err)
		os.Exit(1)
	}
	f, err := os.Create(*out)
	if err == nil {
		err = draw(f, points)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchchart:", err)
		os.Exit(1)
	}
	fmt.Println("chart:", *out)
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s`)

// read adds path's figures to points: series label → concurrency → ops/s.
func read(path string, points map[string]map[int]float64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, conc, ops, ok := parse(sc.Text())
		if !ok {
			continue
		}
		for _, s := range series {
			if s.match.MatchString(name) {
				if points[s.label] == nil {
					points[s.label] = map[int]float64{}
				}
				points[s.label][conc] = ops
			}
		}
	}
	return sc.Err()
}

// parse reads one line: a pgbench figure or a benchmark's ops/s.
func parse(line string) (name string, conc int, ops float64, ok bool) {
	f := strings.Fields(line)
	if len(f) == 3 && f[0] == "pgbench" {
		c, err1 := strconv.Atoi(strings.TrimPrefix(f[1], "c="))
		t, err2 := strconv.ParseFloat(strings.TrimPrefix(f[2], "tps="), 64)
		return "pgbench", c, t, err1 == nil && err2 == nil
	}
	m := benchLine.FindStringSubmatch(line)
	if m == nil {
		return "", 0, 0, false
	}
	name = m[1]
	i := strings.LastIndex(name, "c=")
	if i < 0 {
		return "", 0, 0, false
	}
	c, err := strconv.Atoi(name[i+2:])
	if err != nil {
		return "", 0, 0, false
	}
	for k := 1; k < len(f); k++ {
		if f[k] == "ops/s" {
			v, err := strconv.ParseFloat(f[k-1], 64)
			return name, c, v, err == nil
		}
	}
	return "", 0, 0, false
}

// draw writes the chart: concurrency on a log axis, ops/s on a linear one.
func draw(w io.Writer, points map[string]map[int]float64) error {
	const width, height, left, right, top, bottom = 720, 420, 70, 200, 30, 50
	top0 := 0.0
	for _, byConc := range points {
		for _, v := range byConc {
			top0 = max(top0, v)
		}
	}
	if top0 == 0 {
		return fmt.Errorf("no figures to draw")
	}
	step := niceStep(top0 / 5)
	ymax := math.Ceil(top0/step) * step
	x := func(c int) float64 {
		return left + (width-left-right)*math.Log(float64(c))/math.Log(float64(concurrencies[len(concurrencies)-1]))
	}
	y := func(v float64) float64 { return top + (height-top-bottom)*(1-v/ymax) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">Throughput against concurrency (PostgreSQL, ops/s)</text>`+"\n", left)
	for v := 0.0; v <= ymax+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, width-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", left-6, y(v)+4, v)
	}
	for _, c := range concurrencies {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">c=%d</text>`+"\n", x(c), height-bottom+18, c)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">concurrent callers (log scale)</text>`+"\n",
		(left+width-right)/2, height-12)
	legend := top + 10
	for _, s := range series {
		byConc := points[s.label]
		if len(byConc) == 0 {
			continue
		}
		var pts []string
		cs := make([]int, 0, len(byConc))
		for c := range byConc {
			cs = append(cs, c)
		}
		slices.Sort(cs)
		for _, c := range cs {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(c), y(byConc[c])))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s c=%d: %.0f/s</title></circle>`+"\n",
				x(c), y(byConc[c]), s.color, s.label, c, byConc[c])
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), s.color)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n",
			width-right+12, width-right+32, legend, legend, s.color)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", width-right+38, legend+4, s.label)
		legend += 20
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceStep rounds a grid step up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
