// Command cron-oracle answers "what would the Kubernetes CronJob controller do" questions with
// robfig/cron v3 itself, so that cronscale's TypeScript port can be checked against the real
// thing. It reads JSON lines on stdin and writes one JSON line per request on stdout.
//
// Requests:
//
//	{"op":"next","expr":"0 2 * * *","zone":"Europe/Berlin","from":"2021-03-27T00:00:00Z","count":3}
//	  → {"times":["2021-03-28T03:00:00+02:00", ...]} or {"error":"..."}
//	  The schedule is the one kube-controller-manager builds when spec.timeZone is set
//	  (cron.ParseStandard("TZ=<zone> <expr>")), then Next is called from the previous result.
//	  A zero time from Next (nothing within five years) ends the list and sets "zero":true.
//	{"op":"parse","expr":"..."}   → {} or {"error":"..."}   (what CronJob validation runs)
//	{"op":"zone","zone":"..."}    → {} or {"error":"..."}   (time.LoadLocation)
//	{"op":"offsets","zone":"...","from":"...","to":"..."} → {"offsets":[[unix,offsetSeconds],...]}
//
// With -list-zones it prints every zone name in Go's bundled tzdata ($ZONEINFO when it names a
// .zip, else GOROOT/lib/time/zoneinfo.zip).
package main

import (
	"archive/zip"
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

type request struct {
	Op    string `json:"op"`
	Expr  string `json:"expr"`
	Zone  string `json:"zone"`
	From  string `json:"from"`
	Count int    `json:"count"`
	To    string `json:"to"`
}

type response struct {
	Times []string `json:"times,omitempty"`
	Zero  bool     `json:"zero,omitempty"`
	Error string   `json:"error,omitempty"`
	// Offsets: [unix seconds, UTC offset seconds] at "from" and after each offset change up to "to".
	Offsets [][2]int64 `json:"offsets,omitempty"`
}

// offsets lists the zone's UTC offset changes between two instants, from Go's own tzdata, so the
// test can tell a data difference (Go vs Node's ICU) from an algorithm difference.
func offsets(r request) response {
	loc, err := loadLocation(r.Zone)
	if err != nil {
		return response{Error: "zone: " + err.Error()}
	}
	from, err1 := time.Parse(time.RFC3339, r.From)
	to, err2 := time.Parse(time.RFC3339, r.To)
	if err1 != nil || err2 != nil {
		return response{Error: "from/to must be RFC 3339"}
	}
	t := from.In(loc)
	_, off := t.Zone()
	out := response{Offsets: [][2]int64{{t.Unix(), int64(off)}}}
	for t.Before(to) {
		_, end := t.ZoneBounds()
		if end.IsZero() {
			break
		}
		if !end.After(t) {
			// Go 1.26's ZoneBounds returns a period ending where it starts at the year boundary
			// of rule-based (TZ string) zone data; step past it.
			t = t.Add(time.Second)
			continue
		}
		t = end.In(loc)
		if t.After(to) {
			break
		}
		if _, o := t.Zone(); o != off {
			off = o
			out.Offsets = append(out.Offsets, [2]int64{t.Unix(), int64(o)})
		}
	}
	return out
}

var locations = map[string]*time.Location{}

// loadLocation memoises time.LoadLocation, which re-reads the tzdata zip on every call.
func loadLocation(name string) (*time.Location, error) {
	if loc, ok := locations[name]; ok {
		return loc, nil
	}
	loc, err := time.LoadLocation(name)
	if err == nil {
		locations[name] = loc
	}
	return loc, err
}

func next(r request) response {
	loc, err := loadLocation(r.Zone)
	if err != nil {
		return response{Error: "zone: " + err.Error()}
	}
	// kube-controller-manager parses "TZ=<zone> <expr>", which sets the schedule's Location to
	// time.LoadLocation(zone); setting it directly is the same schedule without re-reading the
	// tzdata zip for every request.
	parsed, err := cron.ParseStandard(r.Expr)
	if err != nil {
		return response{Error: err.Error()}
	}
	sched, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return response{Error: "not a cron spec schedule"}
	}
	sched.Location = loc
	t, err := time.Parse(time.RFC3339Nano, r.From)
	if err != nil {
		return response{Error: "from: " + err.Error()}
	}
	out := response{Times: []string{}}
	for i := 0; i < r.Count; i++ {
		t = sched.Next(t)
		if t.IsZero() {
			out.Zero = true
			break
		}
		out.Times = append(out.Times, t.In(loc).Format(time.RFC3339))
	}
	return out
}

func handle(r request) response {
	switch r.Op {
	case "next":
		return next(r)
	case "parse":
		if _, err := cron.ParseStandard(r.Expr); err != nil {
			return response{Error: err.Error()}
		}
		return response{}
	case "offsets":
		return offsets(r)
	case "zone":
		if _, err := time.LoadLocation(r.Zone); err != nil {
			return response{Error: err.Error()}
		}
		return response{}
	}
	return response{Error: "unknown op " + r.Op}
}

func listZones() error {
	path := os.Getenv("ZONEINFO")
	if !strings.HasSuffix(path, ".zip") {
		path = filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip")
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, "/") {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(n)
	}
	return nil
}

// exportZones writes every TZif file of Go's bundled tzdata under dir, so the operator's own
// TZif reader (src/cron/zone.ts, via $ZONEINFO) and this oracle read the very same bytes.
func exportZones(dir string) error {
	zr, err := zip.OpenReader(filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") || strings.Contains(f.Name, "..") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	list := flag.Bool("list-zones", false, "print the zone names of Go's bundled tzdata and exit")
	export := flag.String("export-zones", "", "write Go's bundled tzdata as TZif files under this directory and exit")
	flag.Parse()
	if *export != "" {
		if err := exportZones(*export); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *list {
		if err := listZones(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var r request
		var resp response
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			resp = response{Error: "request: " + err.Error()}
		} else {
			resp = handle(r)
		}
		if err := enc.Encode(resp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
