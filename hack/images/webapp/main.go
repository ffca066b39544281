// Command webapp is the small HTTP application the platform tests deploy: it answers on
// $PORT (default 8080), reports on /healthz whether its PostgreSQL database ($DATABASE_URL)
// answers, burns CPU on /burn?ms=N (to drive a CPU-based HorizontalPodAutoscaler) and exposes
// a few Prometheus metrics, one of them settable through /set?value=V (to drive a custom
// metric).
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// maxBurn bounds one /burn request so a test cannot wedge a pod by mistake.
const maxBurn = 10 * time.Second

type app struct {
	dbURL    string
	hostname string
	poolOnce sync.Once
	pool     *pgxpool.Pool
	poolErr  error
	requests atomic.Int64
	burnedMs atomic.Int64
	custom   atomic.Uint64 // float64 bits
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	host, _ := os.Hostname()
	a := &app{dbURL: os.Getenv("DATABASE_URL"), hostname: host}
	srv := &http.Server{Addr: ":" + port, Handler: a.routes(), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("webapp listening on :%s", port)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	if a.pool != nil {
		a.pool.Close()
	}
}

func (a *app) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", a.count(a.index))
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /burn", a.count(a.burn))
	mux.HandleFunc("GET /set", a.set)
	mux.HandleFunc("GET /metrics", a.metrics)
	return mux
}

func (a *app) count(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.requests.Add(1)
		h(w, r)
	}
}

func (a *app) index(w http.ResponseWriter, _ *http.Request) {
	fmt.Fprintf(w, "cronscale webapp on %s\n", a.hostname)
}

// healthz is healthy when the database answers a query (or when no database is configured).
func (a *app) healthz(w http.ResponseWriter, r *http.Request) {
	if a.dbURL == "" {
		fmt.Fprintln(w, "ok (no DATABASE_URL)")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	a.poolOnce.Do(func() { a.pool, a.poolErr = pgxpool.New(context.Background(), a.dbURL) })
	if a.poolErr != nil {
		http.Error(w, "database: "+a.poolErr.Error(), http.StatusServiceUnavailable)
		return
	}
	var one int
	if err := a.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		http.Error(w, "database: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok (database answers)")
}

// burn keeps one CPU busy for ms milliseconds.
func (a *app) burn(w http.ResponseWriter, r *http.Request) {
	ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
	if err != nil || ms < 0 {
		http.Error(w, "ms must be a non-negative integer", http.StatusBadRequest)
		return
	}
	d := min(time.Duration(ms)*time.Millisecond, maxBurn)
	end := time.Now().Add(d)
	x := 0.0
	for time.Now().Before(end) {
		for i := 0; i < 10000; i++ {
			x += math.Sqrt(float64(i))
		}
	}
	a.burnedMs.Add(d.Milliseconds())
	fmt.Fprintf(w, "burned %d ms (%g)\n", d.Milliseconds(), math.Mod(x, 1))
}

// set changes the value of the webapp_custom_value gauge.
func (a *app) set(w http.ResponseWriter, r *http.Request) {
	v, err := strconv.ParseFloat(r.URL.Query().Get("value"), 64)
	if err != nil {
		http.Error(w, "value must be a number", http.StatusBadRequest)
		return
	}
	a.custom.Store(math.Float64bits(v))
	fmt.Fprintf(w, "webapp_custom_value %g\n", v)
}

func (a *app) metrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# HELP webapp_requests_total Requests served by / and /burn.\n# TYPE webapp_requests_total counter\nwebapp_requests_total %d\n", a.requests.Load())
	fmt.Fprintf(w, "# HELP webapp_burn_seconds_total CPU time burned on request.\n# TYPE webapp_burn_seconds_total counter\nwebapp_burn_seconds_total %g\n", float64(a.burnedMs.Load())/1000)
	fmt.Fprintf(w, "# HELP webapp_custom_value Value set through /set?value=V.\n# TYPE webapp_custom_value gauge\nwebapp_custom_value %g\n", math.Float64frombits(a.custom.Load()))
}
