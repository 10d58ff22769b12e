// Command demo is a small service with realistic, time-varying work, for trying scorch:
// it serves net/http/pprof (so scorch can scrape it) and, with -push, also pushes its own
// CPU and heap profiles to a scorch server every 10 seconds, the way Pyroscope clients do.
//
// The work: an "api" that encodes JSON and hashes payloads, a "compressor" that deflates
// buffers, a cache that grows for a while and is then trimmed (memory growth over time),
// goroutines that contend on a lock (mutex profile) and wait on channels (block profile).
// Load follows a slow wave (about 6 minutes per period), so different time ranges show
// different CPU levels worth comparing.
//
// Things for scorch to find by itself (the Changes view, /api/v1/changes): the api is
// "deployed" in a new version every 5 minutes (its samples carry a `version` pprof label,
// v1 to v4 and round again), each version hashing a little more than the one before (a
// small regression at each deploy, undone when v1 comes back), and a session table leaks
// slowly (2 KiB a second, in leakSession: heap in use climbing, cleared at 256 MiB).
package main

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand"
	"net/http"
	_ "net/http/pprof"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

type order struct {
	ID       int               `json:"id"`
	Customer string            `json:"customer"`
	Items    []item            `json:"items"`
	Tags     map[string]string `json:"tags"`
}

type item struct {
	SKU   string  `json:"sku"`
	Qty   int     `json:"qty"`
	Price float64 `json:"price"`
}

var start = time.Now()

// load is between 0.2 and 1.0, a slow wave.
func load() float64 {
	t := time.Since(start).Seconds()
	return 0.6 + 0.4*math.Sin(2*math.Pi*t/360)
}

func makeOrder(r *rand.Rand) order {
	o := order{ID: r.Int(), Customer: fmt.Sprintf("cust-%d", r.Intn(1000)), Tags: map[string]string{}}
	for i := 0; i < 5+r.Intn(20); i++ {
		o.Items = append(o.Items, item{SKU: fmt.Sprintf("sku-%d", r.Intn(5000)), Qty: 1 + r.Intn(5), Price: r.Float64() * 100})
	}
	o.Tags["region"] = []string{"eu", "us", "ap"}[r.Intn(3)]
	return o
}

//go:noinline
func encodeOrders(r *rand.Rand) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := 0; i < 50; i++ {
		_ = enc.Encode(makeOrder(r))
	}
	return buf.Bytes()
}

// deployEvery is how long a version of the api lasts (-deploy-every).
var deployEvery = 5 * time.Minute

// version is the api's current version, 1 to 4, and round again.
func version() int {
	return 1 + int(time.Since(start)/deployEvery)%4
}

//go:noinline
func hashPayload(b []byte, rounds int) [32]byte {
	var sum [32]byte
	for i := 0; i < rounds; i++ {
		sum = sha256.Sum256(append(b, sum[:]...))
	}
	return sum
}

func apiWorker() {
	r := rand.New(rand.NewSource(1))
	for {
		t0 := time.Now()
		v := version()
		// the version as a pprof label: scorch makes it a series label of the CPU
		// profile's samples, and its changes markers
		pprof.Do(context.Background(), pprof.Labels("version", fmt.Sprintf("v%d", v)), func(context.Context) {
			hashPayload(encodeOrders(r), 20+4*(v-1)) // each version 20% more hashing
		})
		busy := time.Since(t0)
		// sleep so that busy / (busy + idle) follows the load wave
		l := load()
		time.Sleep(time.Duration(float64(busy) * (1 - l) / l))
	}
}

//go:noinline
func compressBlock(data []byte) int {
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, flate.BestCompression)
	_, _ = w.Write(data)
	_ = w.Close()
	return out.Len()
}

func compressor() {
	r := rand.New(rand.NewSource(2))
	data := make([]byte, 256<<10)
	for {
		for i := range data {
			data[i] = byte('a' + r.Intn(8))
		}
		compressBlock(data)
		time.Sleep(time.Duration(200*(1.2-load())) * time.Millisecond)
	}
}

var (
	cacheMu sync.Mutex
	cache   = map[int][]byte{}
)

//go:noinline
func fillCache(r *rand.Rand) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	cache[r.Int()] = make([]byte, 16<<10)
}

// cacheGrower grows the cache for about two minutes, then trims it: heap in use climbs
// and falls, the thing memory comparisons are for.
func cacheGrower() {
	r := rand.New(rand.NewSource(3))
	for {
		for i := 0; i < 1200; i++ {
			fillCache(r)
			time.Sleep(100 * time.Millisecond)
		}
		cacheMu.Lock()
		cache = map[int][]byte{}
		cacheMu.Unlock()
	}
}

var sessions [][]byte

//go:noinline
func leakSession() {
	if len(sessions) >= 128<<10 { // 256 MiB: "restarted"
		sessions = nil
	}
	sessions = append(sessions, make([]byte, 2<<10))
}

// leaker leaks 2 KiB `rate` times a second: never freed, the heap's slow climb.
func leaker(rate float64) {
	for {
		leakSession()
		time.Sleep(time.Duration(float64(time.Second) / rate))
	}
}

var (
	hot   sync.Mutex
	total int
)

//go:noinline
func contend() {
	for {
		hot.Lock()
		for i := 0; i < 20000; i++ {
			total += i
		}
		hot.Unlock()
		time.Sleep(time.Millisecond)
	}
}

func pipeline() {
	ch := make(chan int)
	go func() {
		for v := range ch {
			time.Sleep(time.Duration(v%5) * time.Millisecond)
		}
	}()
	for i := 0; ; i++ {
		ch <- i
	}
}

// push sends one profile to a scorch (or Pyroscope) server's /ingest.
func push(server, name string, from, until time.Time, body []byte) {
	q := url.Values{}
	q.Set("name", name)
	q.Set("from", fmt.Sprint(from.Unix()))
	q.Set("until", fmt.Sprint(until.Unix()))
	q.Set("format", "pprof")
	q.Set("spyName", "gospy")
	resp, err := http.Post(server+"/ingest?"+q.Encode(), "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		log.Printf("push %s: %v", name, err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		log.Printf("push %s: %s", name, resp.Status)
	}
}

func pusher(server, app string) {
	for {
		from := time.Now()
		var cpu bytes.Buffer
		if err := pprof.StartCPUProfile(&cpu); err != nil {
			log.Printf("cpu profile: %v", err)
			time.Sleep(10 * time.Second)
			continue
		}
		time.Sleep(10 * time.Second)
		pprof.StopCPUProfile()
		until := time.Now()
		push(server, app+".cpu{env=demo}", from, until, cpu.Bytes())
		var heap bytes.Buffer
		_ = pprof.Lookup("heap").WriteTo(&heap, 0)
		push(server, app+"{env=demo}", from, until, heap.Bytes())
	}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:6060", "where net/http/pprof listens")
	server := flag.String("push", "", "a scorch server to push profiles to, e.g. http://127.0.0.1:4040")
	app := flag.String("name", "demo", "the service name")
	leaks := flag.Float64("leaks", 1, "2 KiB sessions leaked a second")
	flag.DurationVar(&deployEvery, "deploy-every", deployEvery, "how long a version of the api lasts")
	flag.Parse()
	runtime.SetMutexProfileFraction(5)
	runtime.SetBlockProfileRate(100000)
	for i := 0; i < 2; i++ {
		go apiWorker()
	}
	go compressor()
	go cacheGrower()
	if *leaks > 0 {
		go leaker(*leaks)
	}
	go contend()
	go contend()
	go pipeline()
	if *server != "" {
		go pusher(*server, *app)
	}
	log.Printf("demo: pprof on http://%s/debug/pprof/", *listen)
	if err := http.ListenAndServe(*listen, nil); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
