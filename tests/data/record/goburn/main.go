// A Go program with a known CPU profile for `scorch record`: main.burn takes ~3/4 of the
// time, main.spin ~1/4 with the inlined main.step doing its work. Runs for the seconds
// given as its argument.
package main

import (
	"os"
	"strconv"
	"time"
)

var acc uint64

func step(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

//go:noinline
func burn(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 10000; i++ {
			acc = acc*2862933555777941757 + 3037000493
		}
	}
}

//go:noinline
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 10000; i++ {
			acc ^= step(acc) >> 7
		}
	}
}

func main() {
	secs, _ := strconv.ParseFloat(os.Args[1], 64)
	for end := time.Now().Add(time.Duration(secs * float64(time.Second))); time.Now().Before(end); {
		burn(30 * time.Millisecond)
		spin(10 * time.Millisecond)
	}
}
