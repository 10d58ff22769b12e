// A small program with a known profile: main.burn takes ~3/4 of the CPU and
// main.spin ~1/4 (main.spin also calls an inlinable helper); main.grow does
// nearly all allocation. Writes cpu.pb.gz and mem.pb.gz into the directory
// given as the first argument. `goprog burn SECONDS` only burns and spins (3:1) for that
// long, writing nothing: what the `scorch record` tests sample from outside.
//
// The work is a fixed number of iterations, not a fixed time (burn mode: per round): the
// profilers sample CPU time, so the profile's shape (and its sample count, about 120 at
// 100 Hz) does not depend on how loaded the machine is.
package main

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var sink []byte
var acc uint64

func step(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

// chunk counts a chunk of burn or spin done. The call keeps burn and spin from being leaf
// functions, which Go builds without a frame: frame-pointer unwinding (perf, scorch
// record) would then skip their caller, main.main.
//
//go:noinline
func chunk() { chunks++ }

var chunks int

//go:noinline
func burn(n int) {
	for c := 0; c < n; c++ {
		for i := 0; i < 10000; i++ {
			acc = acc*2862933555777941757 + 3037000493
		}
		chunk()
	}
}

//go:noinline
func spin(n int) {
	for c := 0; c < n; c++ {
		for i := 0; i < 10000; i++ {
			acc ^= step(acc) >> 7
		}
		chunk()
	}
}

//go:noinline
func grow(n int) {
	for i := 0; i < n; i++ {
		sink = make([]byte, 64<<10)
	}
}

// init runs the program again with async preemption off (GODEBUG is read only at start):
// on a loaded machine Go's CPU profile puts a quarter to a half of the loops' samples into
// runtime.asyncPreempt (measured with both cores busy), and main.burn no longer tops it.
func init() {
	debug := os.Getenv("GODEBUG")
	if strings.Contains(debug, "asyncpreemptoff=1") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if debug != "" {
		debug += ","
	}
	env := []string{"GODEBUG=" + debug + "asyncpreemptoff=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	syscall.Exec(exe, os.Args, env)
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "burn" {
		secs, _ := strconv.ParseFloat(os.Args[2], 64)
		for end := time.Now().Add(time.Duration(secs * float64(time.Second))); time.Now().Before(end); {
			burn(800) // ~28 ms of CPU
			spin(230) // ~10 ms
		}
		return
	}
	dir := os.Args[1]
	runtime.MemProfileRate = 4096
	cpu, err := os.Create(filepath.Join(dir, "cpu.pb.gz"))
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		panic(err)
	}
	// a chunk of burn takes ~12 µs, one of spin ~15 µs here: ~1.2 s and ~0.45 s of CPU in
	// all, so that main.step (inlined in spin, about a fifth of its samples) has some at
	// 100 Hz on every run (with ~12 samples of spin it had none in one run of six)
	for r := 0; r < 4; r++ {
		burn(25600)
		spin(7200)
	}
	grow(2000)
	pprof.StopCPUProfile()
	cpu.Close()
	mem, err := os.Create(filepath.Join(dir, "mem.pb.gz"))
	if err != nil {
		panic(err)
	}
	pprof.Lookup("allocs").WriteTo(mem, 0)
	mem.Close()
}
