// Command testapp is the workload of the cluster's own tests, packed into a FROM-scratch image:
//
//	testapp serve [ADDR]   HTTP server: / answers with the pod's hostname, /ready is the readiness
//	                       probe, POST /unready makes it fail from then on; every request is logged
//	testapp eat MIB_STEP   allocates and touches memory, MIB_STEP MiB at a time, until it is killed
//	testapp get URL        resolves URL's host (through the pod's resolv.conf) and fetches URL,
//	                       retrying for up to 60 s; prints the addresses and the body
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testapp serve [ADDR] | eat MIB_STEP | get URL")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		addr := ":8080"
		if len(os.Args) > 2 {
			addr = os.Args[2]
		}
		serve(addr)
	case "eat":
		step, err := strconv.Atoi(arg(2))
		if err != nil || step <= 0 {
			fmt.Fprintln(os.Stderr, "eat: MIB_STEP must be a positive integer")
			os.Exit(2)
		}
		eat(step)
	case "get":
		os.Exit(get(arg(2)))
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

func arg(i int) string {
	if len(os.Args) <= i {
		fmt.Fprintln(os.Stderr, "missing argument")
		os.Exit(2)
	}
	return os.Args[i]
}

func serve(addr string) {
	host, _ := os.Hostname()
	var unready atomic.Bool
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("request %s %s from %s\n", r.Method, r.URL.Path, r.RemoteAddr)
		fmt.Fprintf(w, "hello from %s\n", host)
	})
	http.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		if unready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, !unready.Load())
	})
	http.HandleFunc("/unready", func(w http.ResponseWriter, r *http.Request) {
		unready.Store(true)
		fmt.Println("readiness now fails")
		fmt.Fprintln(w, "ok")
	})
	fmt.Printf("testapp serving on %s as %s\n", addr, host)
	if err := http.ListenAndServe(addr, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var hoard [][]byte

func eat(step int) {
	for total := step; ; total += step {
		chunk := make([]byte, step<<20)
		for i := 0; i < len(chunk); i += 4096 {
			chunk[i] = 1
		}
		hoard = append(hoard, chunk)
		fmt.Printf("allocated %d MiB\n", total)
		time.Sleep(100 * time.Millisecond)
	}
}

func get(raw string) int {
	target, err := url.Parse(raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	client := http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		addrs, lookupErr := net.LookupHost(target.Hostname())
		if lookupErr == nil {
			resp, err := client.Get(raw)
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				fmt.Printf("resolved %s to %v\nstatus %d\nbody %s", target.Hostname(), addrs, resp.StatusCode, body)
				return 0
			}
			lookupErr = err
		}
		if time.Now().After(deadline) {
			fmt.Printf("failed: %v\n", lookupErr)
			return 1
		}
		time.Sleep(time.Second)
	}
}
