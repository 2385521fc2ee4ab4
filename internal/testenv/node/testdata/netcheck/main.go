// Command netcheck is every pod of the test node's NetworkPolicy test
// (netpol_test.go): a server on :8080, and a probe. GET /dial?to=ADDR
// makes one TCP connection from this pod's network namespace, so what it
// answers is what a policy lets this pod reach; the test asks it from the
// node's own namespace, which policies never isolate a pod from.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/dial", func(w http.ResponseWriter, r *http.Request) {
		to := r.URL.Query().Get("to")
		// A policy's REJECT answers at once; a DROP would take the timeout.
		c, err := net.DialTimeout("tcp", to, 3*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_ = c.Close()
		fmt.Fprintln(w, "connected to", to)
	})
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	// As PID 1 of its container it would ignore SIGTERM and hold up the
	// pod's deletion for its whole grace period.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
