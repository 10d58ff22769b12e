#!/usr/bin/env python3
"""otlp_client.py - builds OTLP profiles export requests from `perf script` text and sends
them the way OpenTelemetry's exporters do, for tests/e2e/otlp.sh.

The messages come from stubs that protoc generates at test time from the project's own
tests/proto/scorch_otlp.proto (written from OTLP's field numbers); the gRPC client is
Debian's python3-grpcio. Usage:

  otlp_client.py STUBS folded PERF            the converter's stacks as folded lines
  otlp_client.py STUBS build PERF BASE SHAPE SERVICE OUT
        one request (two profiles: samples/count and the event's nanoseconds) with the
        perf samples shifted by whole seconds so the first lands in second BASE; SHAPE is
        values (aggregated, no timestamps), timestamps (each worth 1) or paired
  otlp_client.py STUBS json IN OUT            the request in OTLP JSON (hex ids)
  otlp_client.py STUBS bad IN OUT             IN plus two malformed profiles
  otlp_client.py STUBS grpc ADDR IN [--token T] [--authorization V] [--tenant T] [--gzip]
                             [--version V] [--method PATH] [--junk N] [--ca PEM]
        ProfilesService/Export (over TLS trusting PEM with --ca); prints
        "ok REJECTED MESSAGE" or "error CODE DETAILS"
  otlp_client.py STUBS response FILE [json]   prints "REJECTED MESSAGE" of a response body

Frames follow stackcollapse-perf.pl's default naming (the process name as the root frame,
"+0x.." offsets cut, "[unknown]" symbols named by their binary), so the same capture
pushed to /ingest?format=perf_script must render the same flame graph; the test checks
this converter's folded output against `scorch collapse perf` first.
"""
import base64
import json
import os
import re
import sys

sys.path.insert(0, sys.argv[1])
import scorch_otlp_pb2 as pb  # noqa: E402
from google.protobuf import json_format  # noqa: E402

HEADER = re.compile(r"^(\S.+?)\s+(\d+)[/]*(\d+)*\s+")
EVENT = re.compile(r":\s*(\d+)*\s+(\S+):\s*$")
TIME = re.compile(r" +([0-9]+)(?:\.([0-9]*))?: ")
FRAME = re.compile(r"^\s*(\w+)\s*(.+) \((.*)\)")
NS = 10**9


def tidy(func, dso):
    func = re.sub(r"\+0x[\da-f]+$", "", func)
    if func == "[unknown]" and dso != "[unknown]":
        func = "[" + dso.rsplit("/", 1)[-1] + "]"
    func = func.replace(";", ":")
    if not re.search(r"\.\(.*\)\.", func):
        func = re.sub(r"\((?!anonymous namespace\)).*", "", func)
    return func.replace('"', "").replace("'", "")


def samples(path):
    """(process, [frames leaf first], period, timestamp ns) per sample of the first event."""
    event, cur = None, None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    yield cur
                cur = None
                continue
            m = HEADER.match(line)
            if m and cur is None:
                e = EVENT.search(line)
                if e and event is None:
                    event = e.group(2)
                if e and e.group(2) != event:
                    continue
                t = TIME.search(line)
                frac = (t.group(2) or "")[:9].ljust(9, "0")
                ts = int(t.group(1)) * NS + int(frac)
                period = int(e.group(1)) if e and e.group(1) else 1
                cur = [m.group(1).replace(" ", "_"), [], period, ts]
                continue
            m = FRAME.match(line)
            if m and cur is not None:
                cur[1].append(tidy(m.group(2), m.group(3)))
    if cur:
        pass  # cut off by the end of the file: not counted, as stackcollapse-perf.pl does


class Dict:
    """The request's dictionary: tables with their zero value at index 0."""

    def __init__(self, d):
        self.d = d
        self.strings, self.funcs, self.locs, self.stacks = {}, {}, {}, {}
        self.attrs, self.links = {}, {}
        d.string_table.append("")
        d.mapping_table.add()
        d.location_table.add()
        d.function_table.add()
        d.link_table.add(trace_id=bytes(16), span_id=bytes(8))
        d.attribute_table.add()
        d.stack_table.add()

    def s(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.d.string_table)
            self.d.string_table.append(text)
        return self.strings[text]

    def loc(self, name):
        if name not in self.locs:
            if name not in self.funcs:
                self.funcs[name] = len(self.d.function_table)
                self.d.function_table.add(name_strindex=self.s(name))
            self.locs[name] = len(self.d.location_table)
            loc = self.d.location_table.add()
            loc.lines.add(function_index=self.funcs[name])
        return self.locs[name]

    def stack(self, frames):
        key = tuple(frames)
        if key not in self.stacks:
            self.stacks[key] = len(self.d.stack_table)
            self.d.stack_table.add(location_indices=[self.loc(f) for f in frames])
        return self.stacks[key]

    def attr(self, key, value):
        k = (key, value)
        if k not in self.attrs:
            self.attrs[k] = len(self.d.attribute_table)
            a = self.d.attribute_table.add(key_strindex=self.s(key))
            if isinstance(value, int):
                a.value.int_value = value
            else:
                a.value.string_value_strindex = self.s(value)
        return self.attrs[k]

    def link(self, n):
        if n not in self.links:
            self.links[n] = len(self.d.link_table)
            self.d.link_table.add(trace_id=n.to_bytes(16, "big"), span_id=(n + 1).to_bytes(8, "big"))
        return self.links[n]


def build(perf, base, shape, service, out):
    all_samples = list(samples(perf))
    first = min(s[3] for s in all_samples)
    shift = (base - first // NS) * NS
    req = pb.ExportProfilesServiceRequest()
    d = Dict(req.dictionary)
    rp = req.resource_profiles.add()
    for k, v in (("service.name", service), ("host.name", "test-host"), ("deployment.environment", "e2e")):
        kv = rp.resource.attributes.add(key=k)
        kv.value.string_value = v
    sp = rp.scope_profiles.add()
    sp.scope.name = "scorch-otlp-test"
    sp.scope.version = "1"
    # one Sample per distinct (stack, process) identity, as the spec asks of senders
    groups = {}
    for proc, frames, period, ts in all_samples:
        groups.setdefault((tuple(frames + [proc]), proc), []).append((ts + shift, period))
    for type_name, unit in (("samples", "count"), ("cpu-clock", "nanoseconds")):
        prof = sp.profiles.add()
        prof.sample_type.type_strindex = d.s(type_name)
        prof.sample_type.unit_strindex = d.s(unit)
        prof.period_type.type_strindex = d.s("cpu")
        prof.period_type.unit_strindex = d.s("nanoseconds")
        prof.period = all_samples[0][2]
        prof.time_unix_nano = base * NS
        prof.duration_nano = (max(s[3] for s in all_samples) - first) + 1
        prof.profile_id = os.urandom(16)
        for n, ((frames, proc), obs) in enumerate(sorted(groups.items())):
            s = prof.samples.add(stack_index=d.stack(list(frames)))
            s.attribute_indices.extend([d.attr("thread.name", proc), d.attr("process.pid", n % 7)])
            if n % 3 == 0:
                s.link_index = d.link(n + 1)
            vals = [1 if type_name == "samples" else p for _, p in obs]
            if shape == "values":
                s.values.append(sum(vals))
            elif shape == "timestamps" and type_name == "samples":
                s.timestamps_unix_nano.extend(t for t, _ in obs)
            else:  # paired (and the nanoseconds profile of "timestamps")
                s.values.extend(vals)
                s.timestamps_unix_nano.extend(t for t, _ in obs)
    with open(out, "wb") as f:
        f.write(req.SerializeToString())


def bad(inp, out):
    """The request plus two profiles OTLP forbids: a stack index past the stack table, and
    a sample with more values than timestamps (the request must be a paired one)."""
    req = pb.ExportProfilesServiceRequest.FromString(open(inp, "rb").read())
    sp = req.resource_profiles[0].scope_profiles[0]
    good = sp.profiles[0]
    p = sp.profiles.add()
    p.CopyFrom(good)
    p.samples[0].stack_index = 10**6
    q = sp.profiles.add()
    q.CopyFrom(good)
    q.samples[0].values.append(5)
    with open(out, "wb") as f:
        f.write(req.SerializeToString())


def hexify(obj):
    """OTLP JSON: trace, span and profile ids are hex, not protobuf JSON's base64."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("traceId", "spanId", "profileId") and isinstance(v, str):
                obj[k] = base64.b64decode(v).hex()
            else:
                hexify(v)
    elif isinstance(obj, list):
        for v in obj:
            hexify(v)


def to_json(inp, out):
    req = pb.ExportProfilesServiceRequest.FromString(open(inp, "rb").read())
    obj = json_format.MessageToDict(req)
    hexify(obj)
    with open(out, "w") as f:
        json.dump(obj, f)


def grpc_export(addr, inp, args):
    import grpc
    flags = [a for a in args if a == "--gzip"]
    rest = [a for a in args if a != "--gzip"]
    opts = dict(zip(rest[::2], rest[1::2]))
    md = []
    if "--token" in opts:
        md.append(("authorization", "Bearer " + opts["--token"]))
    if "--authorization" in opts:
        md.append(("authorization", opts["--authorization"]))
    if "--tenant" in opts:
        md.append(("x-scope-orgid", opts["--tenant"]))
    if "--version" in opts:
        md.append(("otlp-profiles-development-version", opts["--version"]))
    method = opts.get("--method",
                      "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export")
    # --junk N: N bytes of 0x0a (not a request) instead of the file
    body = b"\n" * int(opts["--junk"]) if "--junk" in opts else open(inp, "rb").read()
    # --ca PEM: over TLS, trusting that certificate (gRPC's ALPN offers "h2")
    chopts = [("grpc.max_send_message_length", -1)]
    if "--ca" in opts:
        with open(opts["--ca"], "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        channel = grpc.secure_channel(addr, creds, options=chopts)
    else:
        channel = grpc.insecure_channel(addr, options=chopts)
    with channel as ch:
        export = ch.unary_unary(method, request_serializer=lambda b: b,
                                response_deserializer=pb.ExportProfilesServiceResponse.FromString)
        try:
            resp = export(body, metadata=md, timeout=60,
                          compression=grpc.Compression.Gzip if flags else None)
        except grpc.RpcError as e:
            print("error %s %s" % (e.code().name, e.details()))
            return
    ps = resp.partial_success
    print("ok %d %s" % (ps.rejected_profiles, ps.error_message))


def response(path, enc):
    data = open(path, "rb").read()
    if enc == "json":
        resp = json_format.Parse(data, pb.ExportProfilesServiceResponse())
    else:
        resp = pb.ExportProfilesServiceResponse.FromString(data)
    print("%d %s" % (resp.partial_success.rejected_profiles, resp.partial_success.error_message))


def main():
    cmd = sys.argv[2]
    if cmd == "folded":
        counts = {}
        for proc, frames, period, _ in samples(sys.argv[3]):
            key = ";".join([proc] + frames[::-1])
            counts[key] = counts.get(key, 0) + period
        for k in sorted(counts):
            print(k, counts[k])
    elif cmd == "build":
        build(sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7])
    elif cmd == "bad":
        bad(sys.argv[3], sys.argv[4])
    elif cmd == "json":
        to_json(sys.argv[3], sys.argv[4])
    elif cmd == "grpc":
        grpc_export(sys.argv[3], sys.argv[4], sys.argv[5:])
    elif cmd == "response":
        response(sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "pb")
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
