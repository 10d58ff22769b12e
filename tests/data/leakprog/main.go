// Command leakprog is a Go service with a known heap: leakSessions leaks 64 KiB every
// 100 ms (never freed: heap in use climbs 640 KiB a second) while refreshBuffer holds a
// steady 8 MiB (a new buffer every second replaces the last). It serves net/http/pprof
// for scorch to scrape (tests/e2e/watch_leak.sh).
package main

import (
	"flag"
	"log"
	"net/http"
	_ "net/http/pprof"
	"runtime"
	"sync"
	"time"
)

var (
	mu       sync.Mutex
	sessions [][]byte
	buffer   []byte
)

//go:noinline
func leakSessions() {
	mu.Lock()
	sessions = append(sessions, make([]byte, 64<<10))
	mu.Unlock()
}

//go:noinline
func refreshBuffer() {
	b := make([]byte, 8<<20)
	for i := range b {
		b[i] = byte(i)
	}
	mu.Lock()
	buffer = b
	mu.Unlock()
}

func main() {
	listen := flag.String("listen", "127.0.0.1:6061", "where net/http/pprof listens")
	flag.Parse()
	// every allocation of a few KiB sampled: the test compares known sizes
	runtime.MemProfileRate = 4096
	go func() {
		for {
			leakSessions()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	go func() {
		for {
			refreshBuffer()
			runtime.GC() // the heap profile is as of the last GC
			time.Sleep(time.Second)
		}
	}()
	log.Printf("leakprog: pprof on http://%s/debug/pprof/", *listen)
	log.Fatal(http.ListenAndServe(*listen, nil))
}
