// Command scrapeprog is a Go service with a known workload for the scraping tests: it serves
// net/http/pprof and runs
//   - main.burnCPU, the hot function (about half a core),
//   - main.knownAllocator, which allocates exactly -alloc-rate bytes per second in 16 KiB
//     chunks and keeps none of them (allocs:alloc_space),
//   - main.growCache, a cache that keeps growing (heap:inuse_space),
//   - -parked goroutines blocked in main.parkForever (goroutine),
//   - main.contendMutex, goroutines fighting over one mutex (mutex),
//   - main.blockOnChan, a goroutine waiting on a channel (block).
//
// main.knownAllocator keeps to its rate by the clock: each round allocates what is due since
// the start, so a round the scheduler delays (a loaded machine) is made up by the next
// instead of lost. runtime.MemProfileRate = 4096 samples a 16 KiB chunk with probability
// 1-e^-4 (98%) and Go scales the counts back, so alloc_space is within a fraction of a
// percent of the bytes allocated, while the many small allocations of the pprof handlers
// themselves are mostly not recorded (with a rate of 1 they were, and made a ?seconds=
// delta take twice its seconds on a loaded machine). A GC every 200 ms keeps the published
// heap profile fresh.
//
// The tests run it with GODEBUG=asyncpreemptoff=1: on a loaded machine Go's CPU profile puts
// up to a third of main.burnCPU's samples into runtime.asyncPreempt (measured with both
// cores busy), which would soon take the top from it.
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
	sink  []byte
	cache [][]byte
	cmu   sync.Mutex
)

//go:noinline
func burnCPU(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 13
	}
	return x
}

//go:noinline
func knownAllocator(chunk int) []byte { return make([]byte, chunk) }

//go:noinline
func growCache(n int) {
	cmu.Lock()
	if len(cache) < 1024 {
		cache = append(cache, make([]byte, n))
	}
	cmu.Unlock()
}

//go:noinline
func parkForever(ch chan struct{}) { <-ch }

//go:noinline
func contendMutex(mu *sync.Mutex) {
	mu.Lock()
	time.Sleep(time.Millisecond)
	mu.Unlock()
}

//go:noinline
func blockOnChan(ch chan int) int { return <-ch }

func main() {
	listen := flag.String("listen", "127.0.0.1:6060", "address of the pprof server")
	rate := flag.Int("alloc-rate", 4<<20, "bytes per second main.knownAllocator allocates")
	parked := flag.Int("parked", 25, "goroutines parked in main.parkForever")
	flag.Parse()
	runtime.MemProfileRate = 4096
	runtime.SetMutexProfileFraction(1)
	runtime.SetBlockProfileRate(1)

	go func() {
		for {
			burnCPU(3000000)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	go func() {
		const chunk = 16384
		start, done := time.Now(), 0
		t := time.NewTicker(10 * time.Millisecond)
		for range t.C {
			due := int(time.Since(start).Seconds() * float64(*rate) / chunk)
			for ; done < due; done++ {
				sink = knownAllocator(chunk)
			}
		}
	}()
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		for range t.C {
			growCache(64 << 10)
		}
	}()
	never := make(chan struct{})
	for i := 0; i < *parked; i++ {
		go parkForever(never)
	}
	var mu sync.Mutex
	for i := 0; i < 4; i++ {
		go func() {
			for {
				contendMutex(&mu)
			}
		}()
	}
	ch := make(chan int)
	go func() {
		for {
			blockOnChan(ch)
		}
	}()
	go func() {
		for i := 0; ; i++ {
			time.Sleep(10 * time.Millisecond)
			ch <- i
		}
	}()
	go func() {
		for {
			time.Sleep(200 * time.Millisecond)
			runtime.GC()
		}
	}()
	log.Fatal(http.ListenAndServe(*listen, nil))
}
