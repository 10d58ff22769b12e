/* cmd_record.c - `scorch record`: sample on-CPU stacks with perf events, write or push pprof. */
#include "cli/cli.h"
#include "collect/debuginfod.h"
#include "collect/record.h"
#include "collect/remote.h"
#include "formats/input.h"
#include "formats/pprof.h"
#include "model/error.h"
#include "model/clock.h"
#include "model/labels.h"
#include "model/timespec.h"
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: scorch record [-a | -p PID] [-F HZ] [--duration S] [--unwind=MODE] [--off-cpu]\n"
    "                     [-o FILE]\n"
    "       scorch record [-a | -p PID] [-F HZ] [--duration S] --push URL [--interval S]\n"
    "                     [--label k=v]... [--token-file FILE] [--queue-dir DIR]\n"
    "\n"
    "Samples on-CPU stacks, user and kernel frames, with the kernel's cpu-clock perf event\n"
    "(works in VMs and containers without hardware counters) and writes them as pprof:\n"
    "sample types samples and cpu (nanoseconds), every sample with its timestamp and the\n"
    "labels pid, tid and comm. Symbols come from the binaries themselves (ELF symbol\n"
    "tables, Go's pclntab, DWARF file:line, /proc/kallsyms, /tmp/perf-PID.map); perf is not\n"
    "needed; a binary with .dynsym alone gets its debug file by build id from /usr/lib/debug\n"
    "or, when DEBUGINFOD_URLS (or --debuginfod) names servers, from debuginfod; what stays\n"
    "unnamed is counted per binary at the end. User stacks are walked with the binaries' unwind "
    "tables (.eh_frame), so code\n"
    "built without frame pointers gives whole stacks too; stacks that still end early are\n"
    "marked [truncated: <binary>] and counted per binary at the end.\n"
    "\n"
    "options:\n"
    "  -a, --all-cpus      every process on every CPU (the default)\n"
    "  -p, --pid PID       one process: all its threads, also those it starts later, and\n"
    "                      the children it forks; stops when it exits\n"
    "  -F, --freq HZ       samples per second, per CPU or thread (default 99)\n"
    "  --duration S        stop after S (10, 2.5, 1m, 1h); default: at SIGINT or SIGTERM\n"
    "  -o, --output FILE   the gzipped pprof to write (default record.pb.gz; - is stdout)\n"
    "  --push URL          push to a scorch (or Pyroscope) server's /ingest every interval,\n"
    "                      through a bounded on-disk queue, with retries\n"
    "  --interval S        between pushes (default 10s)\n"
    "  --label k=v         a label of the pushed series, repeatable; service_name=NAME names\n"
    "                      it (default: the program's name with -p, the host name with -a).\n"
    "                      With -o, a label of every sample\n"
    "  --token-file FILE   the bearer token for --push (the first line of FILE)\n"
    "  --queue-dir DIR     where pushes wait until delivered (default ./record-queue)\n"
    "  --dwarf, --no-dwarf file:line and inlined frames from DWARF, or function names only;\n"
    "                      default: with DWARF, but for -a --push (every binary the machine\n"
    "                      runs, continuously: names only keep the cost low)\n"
    "  --unwind=MODE       how user stacks are walked: auto (the default: the unwind tables\n"
    "                      on a copy of each sampled stack, the kernel's frame pointer chain\n"
    "                      where they stop early), cfi (the tables only), fp (the kernel's\n"
    "                      frame pointer chain only: no stack copies, the cheapest)\n"
    "  --stack-size BYTES  user stack copied per sample for unwinding (default 32768, at\n"
    "                      most 61440); deeper stacks are completed by frame pointers or cut\n"
    "  --debuginfod URLS   debuginfod servers (space-separated) for the debug files of\n"
    "                      stripped binaries (default: $DEBUGINFOD_URLS); fetched on a thread\n"
    "                      of their own, cached by libdebuginfod\n"
    "  --debuginfod-timeout S  one fetch at most (default 15s); with -o, also what the\n"
    "                      profile waits for fetches after the sampling\n"
    "  --no-debuginfod     ask no debuginfod server, whatever the environment says\n"
    "  --off-cpu           also where threads wait: the sched:sched_switch tracepoint's\n"
    "                      stack of each thread leaving a CPU, kept until it runs again,\n"
    "                      gives sample types offcpu (time blocked: asleep, waiting for\n"
    "                      I/O or a lock) and wall (cpu + offcpu + time preempted, waiting\n"
    "                      for a CPU), nanoseconds, in the same profile\n"
    "  --off-cpu-min D     spans off CPU shorter than D are counted, not kept (default\n"
    "                      100us; 0 keeps every one)\n"
    "  -v, --verbose       log every push and the unwinding figures\n"
    "  -h, --help          show this help\n"
    "\n"
    "SIGINT or SIGTERM stop the sampling; what was recorded is still written (or pushed,\n"
    "trying for 10 s, the rest staying queued for the next run).\n"
    "\n"
    "Permissions: -a needs root or CAP_PERFMON (or kernel.perf_event_paranoid <= 0); -p of\n"
    "your own process needs paranoid <= 2 (user frames) or <= 1 (kernel frames too);\n"
    "--off-cpu needs root (tracefs, mounted when it is not) or CAP_PERFMON and a readable\n"
    "tracefs. See docs/record.md.\n";

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int should_stop(void *ctx)
{
    (void)ctx;
    return stop_flag;
}

struct rec_cli {
    const char *output;
    struct sc_remote *remote;
    const char *service;
    struct sc_labels *labels;
    uint64_t pushed, written_samples;
    int verbose;
    enum sc_record_unwind unwind;
    int off_cpu;
};

/* -o: the one profile, gzipped. */
static int write_sink(void *ctx, const struct sc_profile *p, int64_t from, int64_t until, char *err)
{
    (void)from, (void)until;
    struct rec_cli *c = ctx;
    struct sc_buf raw = SC_BUF_INIT, gz = SC_BUF_INIT;
    int rc = sc_pprof_encode(p, &raw) || raw.oom ? SC_ENOMEM : 0;
    if (!rc && sc_gzip(raw.data ? raw.data : "", raw.len, 6, &gz))
        rc = SC_ENOMEM;
    sc_buf_release(&raw);
    if (rc) {
        sc_buf_release(&gz);
        return sc_errf(err, rc, "out of memory");
    }
    int to_file = strcmp(c->output, "-") != 0;
    int fd = to_file ? open(c->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
    rc = fd < 0 || sc_buf_write_fd(&gz, fd) != 0 ? SC_EIO : 0;
    int e = errno;
    if (to_file && fd >= 0 && close(fd) != 0 && !rc) {
        rc = SC_EIO;
        e = errno;
    }
    sc_buf_release(&gz);
    c->written_samples += p->nsamples;
    return rc ? sc_errf(err, SC_EIO, "cannot write '%s': %s", c->output, strerror(e)) : 0;
}

/* --push: every window with samples goes to the queue, the senders do the rest. */
static int push_sink(void *ctx, const struct sc_profile *p, int64_t from, int64_t until, char *err)
{
    struct rec_cli *c = ctx;
    if (p->nsamples == 0)
        return 0;
    int rc =
        sc_record_deliver(p, from, until, c->service, c->labels, sc_remote_sink, c->remote, err);
    if (rc) {
        /* one profile the queue cannot take is not worth stopping for */
        fprintf(stderr, "scorch: record: %s\n", err);
        return 0;
    }
    c->pushed++;
    return 0;
}

static void print_trunc(void *ctx, const char *dso, uint64_t count)
{
    int *first = ctx;
    fprintf(stderr, "%s%s %llu", *first ? "" : ",", dso, (unsigned long long)count);
    *first = 0;
}

static void print_unsym(void *ctx, const char *dso, uint64_t count, const char *why)
{
    int *first = ctx;
    fprintf(stderr, "%s%s %llu%s%s%s",
            *first ? "scorch: samples with unsymbolized frames by binary: " : ", ", dso,
            (unsigned long long)count, *why ? " (" : "", why, *why ? ")" : "");
    *first = 0;
}

static void summary(struct sc_recorder *r, const struct rec_cli *c, double secs, int pushed)
{
    int first;
    struct sc_record_stats st;
    sc_recorder_stats(r, &st);
    fprintf(stderr,
            "scorch: recorded %llu samples in %.1f s on %u CPUs (%llu lost)%s; symbols of %u "
            "binaries, %u distinct addresses\n",
            (unsigned long long)st.samples, secs, st.cpus, (unsigned long long)st.lost,
            st.user_only ? ", user frames only" : "", st.sym.dsos, st.locations);
    if (st.truncated) {
        fprintf(stderr,
                "scorch: %llu truncated stacks by binary: ", (unsigned long long)st.truncated);
        first = 1;
        sc_recorder_truncated(r, print_trunc, &first);
        fputc('\n', stderr);
    }
    first = 1;
    sc_recorder_unsymbolized(r, print_unsym, &first);
    if (!first)
        fputc('\n', stderr);
    if (c->verbose)
        fprintf(stderr, "scorch: debug files: %llu on disk, %llu from debuginfod (%llu failed)\n",
                (unsigned long long)st.sym.debug_files, (unsigned long long)st.sym.debuginfod_hits,
                (unsigned long long)st.sym.debuginfod_failures);
    if (c->verbose)
        fprintf(stderr,
                "scorch: symbol tables %.1f MiB (%u kept, %llu loads, %llu failed, %llu evicted), "
                "%u kernel symbols, open DWARF %.1f MiB (%u files)\n",
                st.sym.table_bytes / 1048576.0, st.sym.tables, (unsigned long long)st.sym.loads,
                (unsigned long long)st.sym.load_failures, (unsigned long long)st.sym.evictions,
                (unsigned)st.sym.kernel_symbols, st.sym.dwarf_bytes / 1048576.0, st.sym.dwarfs);
    if (c->verbose && c->unwind != SC_RECORD_UNWIND_FP) {
        uint64_t walks = st.stacks_tables + st.stacks_joined + st.stacks_cut;
        uint64_t no_rule = st.unwind_stops[SC_UNWIND_BAD] + st.unwind_stops[SC_UNWIND_DEPTH];
        /* the walks' time without the tables' loading, which is paid once per binary */
        uint64_t walk_ns = st.unwind_ns > st.uw.load_ns ? st.unwind_ns - st.uw.load_ns : 0;
        fprintf(stderr,
                "scorch: user stacks: %llu by the unwind tables, %llu completed by frame "
                "pointers, %llu cut (%llu at the stack copy's end, %llu unmapped, %llu no "
                "rule), %llu the kernel's chain; %.1f us a walk (%.1f frames); unwind tables "
                "%.1f MiB (%u kept, %llu rows, %llu loads in %.0f ms, %llu shared, %llu failed, "
                "%llu evicted)\n",
                (unsigned long long)st.stacks_tables, (unsigned long long)st.stacks_joined,
                (unsigned long long)st.stacks_cut,
                (unsigned long long)st.unwind_stops[SC_UNWIND_STACK_END],
                (unsigned long long)st.unwind_stops[SC_UNWIND_UNMAPPED],
                (unsigned long long)no_rule, (unsigned long long)st.stacks_kernel,
                walks ? (double)walk_ns / 1e3 / (double)walks : 0.0,
                walks ? (double)st.unwind_frames / (double)walks : 0.0,
                (double)st.uw.bytes / 1048576.0, st.uw.tables, (unsigned long long)st.uw.rows,
                (unsigned long long)st.uw.loads, (double)st.uw.load_ns / 1e6,
                (unsigned long long)st.uw.shared, (unsigned long long)st.uw.failures,
                (unsigned long long)st.uw.evictions);
    }
    if (c->off_cpu)
        fprintf(stderr,
                "scorch: off CPU: %llu switches, %llu spans kept (%.3f s blocked, %.3f s waiting "
                "for a CPU), %llu under the minimum (%.3f s), %llu stacks not kept, %llu switch "
                "samples lost\n",
                (unsigned long long)st.switches, (unsigned long long)st.offcpu_spans,
                (double)st.offcpu_ns / 1e9, (double)st.runqueue_ns / 1e9,
                (unsigned long long)st.offcpu_short, (double)st.offcpu_short_ns / 1e9,
                (unsigned long long)st.offcpu_dropped, (unsigned long long)st.offcpu_lost);
    if (pushed)
        fprintf(stderr, "scorch: pushed %llu profiles\n", (unsigned long long)c->pushed);
    else if (c->output && strcmp(c->output, "-"))
        fprintf(stderr, "scorch: wrote '%s'\n", c->output);
}

/* k=v into labels. 0, or a usage error's exit status. */
static int add_label(struct sc_labels *l, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || !eq[1])
        return cli_usage("record", "--label wants k=v, not '%s'", kv);
    char err[SC_ERR_LEN];
    if (sc_label_check(kv, (size_t)(eq - kv), strlen(eq + 1), err))
        return cli_usage("record", "--label: %s", err);
    if (sc_labels_set(l, kv, (size_t)(eq - kv), eq + 1, strlen(eq + 1)))
        return cli_error("out of memory");
    return 0;
}

enum {
    OPT_DURATION = 256,
    OPT_PUSH,
    OPT_INTERVAL,
    OPT_LABEL,
    OPT_TOKEN,
    OPT_QUEUE,
    OPT_NODWARF,
    OPT_DWARF,
    OPT_UNWIND,
    OPT_STACK,
    OPT_DEBUGINFOD,
    OPT_NODEBUGINFOD,
    OPT_DEBUGINFOD_TIMEOUT,
    OPT_OFFCPU,
    OPT_OFFCPU_MIN
};

int cmd_record(int argc, char **argv)
{
    static const struct option opts[] = {
        {"all-cpus", no_argument, 0, 'a'},
        {"pid", required_argument, 0, 'p'},
        {"freq", required_argument, 0, 'F'},
        {"duration", required_argument, 0, OPT_DURATION},
        {"output", required_argument, 0, 'o'},
        {"push", required_argument, 0, OPT_PUSH},
        {"interval", required_argument, 0, OPT_INTERVAL},
        {"label", required_argument, 0, OPT_LABEL},
        {"token-file", required_argument, 0, OPT_TOKEN},
        {"queue-dir", required_argument, 0, OPT_QUEUE},
        {"no-dwarf", no_argument, 0, OPT_NODWARF},
        {"dwarf", no_argument, 0, OPT_DWARF},
        {"unwind", required_argument, 0, OPT_UNWIND},
        {"stack-size", required_argument, 0, OPT_STACK},
        {"debuginfod", required_argument, 0, OPT_DEBUGINFOD},
        {"no-debuginfod", no_argument, 0, OPT_NODEBUGINFOD},
        {"debuginfod-timeout", required_argument, 0, OPT_DEBUGINFOD_TIMEOUT},
        {"off-cpu", no_argument, 0, OPT_OFFCPU},
        {"off-cpu-min", required_argument, 0, OPT_OFFCPU_MIN},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct sc_record_opts ro;
    memset(&ro, 0, sizeof ro);
    const char *output = NULL, *push = NULL, *token_file = NULL, *queue_dir = "./record-queue";
    int64_t duration = 0, interval = sc_setting_default_i(SC_SET_RECORD_INTERVAL);
    struct sc_set_value sv;
    int all = 0, verbose = 0, dwarf = -1, c, rc;
    char err[SC_ERR_LEN] = "";
    struct sc_labels labels;
    sc_labels_init(&labels);
    optind = 1;
    while ((c = getopt_long(argc, argv, "ap:F:o:vh", opts, NULL)) != -1) {
        switch (c) {
        case 'a':
            all = 1;
            break;
        case 'p':
            if ((rc = cli_setting("record", SC_SET_RECORD_PID, "--pid", optarg, &sv)))
                return rc;
            ro.pid = (int32_t)sv.i;
            break;
        case 'F':
            if ((rc = cli_setting("record", SC_SET_RECORD_FREQUENCY, "--freq", optarg, &sv)))
                return rc;
            ro.frequency = (uint32_t)sv.i;
            break;
        case OPT_DURATION:
            if ((rc = cli_setting("record", SC_SET_RECORD_DURATION, "--duration", optarg, &sv)))
                return rc;
            duration = sv.i;
            break;
        case OPT_INTERVAL:
            if ((rc = cli_setting("record", SC_SET_RECORD_INTERVAL, "--interval", optarg, &sv)))
                return rc;
            interval = sv.i;
            break;
        case OPT_DEBUGINFOD_TIMEOUT:
            if ((rc = cli_setting("record", SC_SET_RECORD_DEBUGINFOD_TIMEOUT,
                                  "--debuginfod-timeout", optarg, &sv)))
                return rc;
            ro.sym.debuginfod_timeout_ns = sv.i;
            break;
        case 'o':
            output = optarg;
            break;
        case OPT_PUSH:
            if ((rc = cli_setting("record", SC_SET_RECORD_PUSH, "--push", optarg, &sv)))
                return rc;
            push = optarg;
            break;
        case OPT_LABEL:
            if ((rc = add_label(&labels, optarg))) {
                sc_labels_release(&labels);
                return rc;
            }
            break;
        case OPT_TOKEN:
            token_file = optarg;
            break;
        case OPT_QUEUE:
            queue_dir = optarg;
            break;
        case OPT_NODWARF:
        case OPT_DWARF:
            dwarf = c == OPT_DWARF;
            break;
        case OPT_UNWIND: {
            /* the choices are in the order auto, fp, cfi of enum sc_record_unwind */
            if ((rc = cli_setting("record", SC_SET_RECORD_UNWIND, "--unwind", optarg, &sv)))
                return rc;
            ro.unwind = (enum sc_record_unwind)sv.i;
            break;
        }
        case OPT_STACK:
            if ((rc = cli_setting("record", SC_SET_RECORD_STACK_SIZE, "--stack-size", optarg, &sv)))
                return rc;
            ro.stack_bytes = (uint32_t)sv.i;
            break;
        case OPT_DEBUGINFOD:
            /* libdebuginfod reads its servers from the environment only; set before any
             * thread runs */
            if (setenv("DEBUGINFOD_URLS", optarg, 1)) {
                sc_labels_release(&labels);
                return cli_error("out of memory");
            }
            ro.sym.no_debuginfod = !*optarg;
            break;
        case OPT_NODEBUGINFOD:
            ro.sym.no_debuginfod = 1;
            break;
        case OPT_OFFCPU:
            ro.off_cpu = 1;
            break;
        case OPT_OFFCPU_MIN:
            if ((rc = cli_setting("record", SC_SET_RECORD_OFF_CPU_MIN, "--off-cpu-min", optarg,
                                  &sv)))
                return rc;
            ro.off_cpu_min_ns = sv.i ? sv.i : -1; /* 0 keeps every span; 0 here: the default */
            break;
        case 'v':
            verbose = 1;
            break;
        case 'h':
            sc_labels_release(&labels);
            return cli_help(usage);
        default:
            sc_labels_release(&labels);
            return cli_usage("record", "bad option");
        }
    }
    if (optind < argc || (all && ro.pid) || (output && push)) {
        sc_labels_release(&labels);
        return optind < argc ? cli_usage("record", "unexpected argument '%s'", argv[optind])
               : all         ? cli_usage("record", "-a and -p exclude each other")
                             : cli_usage("record", "-o and --push exclude each other");
    }
    if (!push && !output)
        output = "record.pb.gz";
    ro.sym.no_dwarf = dwarf == -1 ? push && !ro.pid : !dwarf;
    struct rec_cli cl = {output, NULL, NULL, &labels, 0, 0, verbose, ro.unwind, ro.off_cpu};
    char service[256];
    sc_record_service_name(&labels, ro.pid, service, sizeof service);
    cl.service = service;
    if (!push) {
        ro.sample_labels = &labels; /* -o: labels on every sample */
        /* one profile, built once the sampling is over: it may wait for debug files, as
         * long as a fetch may take (libdebuginfod gives up about a second late; a loaded
         * machine's threads later still: 5 s of slack, which a fetch that ends sooner
         * does not use) */
        ro.sym.debuginfod_wait_ns =
            (ro.sym.debuginfod_timeout_ns ? ro.sym.debuginfod_timeout_ns : SC_DEBUGINFOD_TIMEOUT) +
            5 * SC_NS_PER_S;
    } else
        ro.sym.dwarf_bytes = SC_RECORD_DWARF_CACHE; /* profiles every interval */

    char *token = NULL;
    if (token_file && !(token = sc_config_read_token(token_file, err))) {
        sc_labels_release(&labels);
        return cli_error("%s", err);
    }
    struct sc_recorder *r = NULL;
    rc = sc_recorder_open(&ro, &r, err);
    if (!rc && push) {
        struct sc_remote_opts o = {
            .url = push, .token = token, .queue_dir = queue_dir, .verbose = verbose};
        rc = sc_remote_new(&o, &cl.remote, err);
        if (!rc)
            rc = sc_remote_start(cl.remote, err);
    }
    free(token);
    if (rc) {
        sc_remote_stop_free(cl.remote, 0);
        sc_recorder_close(r);
        sc_labels_release(&labels);
        return cli_error("%s", err);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    const char *off = ro.off_cpu ? " and off-CPU time" : "";
    if (ro.pid)
        fprintf(stderr, "scorch: recording process %d at %u Hz%s%s\n", (int)ro.pid,
                ro.frequency ? ro.frequency
                             : (uint32_t)sc_setting_default_i(SC_SET_RECORD_FREQUENCY),
                off, push ? "" : "; Ctrl-C stops");
    else
        fprintf(stderr, "scorch: recording all CPUs at %u Hz%s%s\n",
                ro.frequency ? ro.frequency
                             : (uint32_t)sc_setting_default_i(SC_SET_RECORD_FREQUENCY),
                off, push ? "" : "; Ctrl-C stops");
    fflush(stderr);
    struct sc_record_run run = {
        push ? interval : 0, duration, should_stop, NULL, push ? push_sink : write_sink, &cl, 0};
    double t0 = sc_mono_s();
    rc = sc_record_run(r, &run, err);
    double secs = sc_mono_s() - t0;
    if (run.target_exited)
        fprintf(stderr, "scorch: process %d exited\n", (int)ro.pid);
    sc_remote_stop_free(cl.remote, 10 * 1000000000LL);
    if (!rc)
        summary(r, &cl, secs, push != NULL);
    sc_recorder_close(r);
    sc_labels_release(&labels);
    return rc ? cli_error("%s", err) : 0;
}
