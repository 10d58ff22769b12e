// A program for comparisons: CPU work split over main.parse, main.render and main.encode,
// with -slow making main.parse do that many times its work (a deliberate regression), and
// a heap mode that leaks from main.leak while main.steady keeps a fixed buffer.
//
//	compareprog -cpu FILE [-slow F] [-iters N]   writes a CPU profile of N requests' work
//	compareprog -serve ADDR                       net/http/pprof on ADDR, leaking
package main

import (
	"flag"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

var acc uint64

//go:noinline
func work(n int) {
	for i := 0; i < n; i++ {
		acc = acc*6364136223846793005 + 1442695040888963407
		acc ^= acc >> 13
	}
}

//go:noinline
func parse(slow float64) { work(int(30000 * slow)) }

//go:noinline
func render() { work(50000) }

//go:noinline
func encode() { work(20000) }

//go:noinline
func handle(slow float64) {
	parse(slow)
	render()
	encode()
}

var kept [][]byte
var steadyBuf []byte

//go:noinline
func steady() { steadyBuf = make([]byte, 4<<20) }

//go:noinline
func leak() { kept = append(kept, make([]byte, 256<<10)) }

//go:noinline
func churn() {
	for i := 0; i < 64; i++ {
		b := make([]byte, 16<<10)
		b[0] = byte(i)
	}
}

func main() {
	cpu := flag.String("cpu", "", "write a CPU profile here")
	slow := flag.Float64("slow", 1, "main.parse does this many times its work")
	iters := flag.Int("iters", 3000, "requests to handle while profiling (a fixed amount of CPU "+
		"work, so a profile holds as many samples on a busy machine as on an idle one)")
	serve := flag.String("serve", "", "serve net/http/pprof here and leak")
	flag.Parse()
	if *serve != "" {
		runtime.MemProfileRate = 4096
		steady()
		go func() {
			for {
				leak()
				churn()
				time.Sleep(50 * time.Millisecond)
			}
		}()
		panic(http.ListenAndServe(*serve, nil))
	}
	f, err := os.Create(*cpu)
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	for i := 0; i < *iters; i++ {
		handle(*slow)
	}
	pprof.StopCPUProfile()
	f.Close()
}
