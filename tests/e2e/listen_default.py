"""listen_default.py - a server started with no --listen and no config listens on loopback
only (127.0.0.1:4040): every listening socket the process holds is bound to 127.0.0.1,
none to 0.0.0.0 or ::, and the machine's other address, when it has one, is refused. The
default port must be free (a skip says so when it is not). Standard library only."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Fail, check, fail  # noqa: E402

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]
PORT = 4040


def port_free(host, port):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def socket_inodes(pid):
    """The inodes of the process's sockets."""
    out = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(target[8:-1])
    return out


def listening(pid):
    """(family, address hex, port) of every TCP socket of pid in LISTEN (state 0A)."""
    inodes = socket_inodes(pid)
    found = []
    for fam in ("tcp", "tcp6"):
        try:
            lines = open("/proc/net/" + fam).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            addr, port = f[1].split(":")
            if f[3] == "0A" and f[9] in inodes:
                found.append((fam, addr, int(port, 16)))
    return found


def other_address():
    """An address of this machine's that is not loopback, or None (no packet is sent)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))
        a = s.getsockname()[0]
        return None if a.startswith("127.") else a
    except OSError:
        return None
    finally:
        s.close()


def main():
    if not port_free("0.0.0.0", PORT):
        print("SKIP: port %d is in use here: the default listener cannot be tried" % PORT)
        return 77
    log = open(os.path.join(TMP, "server.log"), "wb")
    proc = subprocess.Popen([SCORCH, "server", "--data", os.path.join(TMP, "data")],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        deadline = time.time() + 15
        while True:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % PORT, timeout=2) as r:
                    check(r.status == 200, "healthz: %d" % r.status)
                    break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    fail("the server did not answer on 127.0.0.1:%d" % PORT)
                time.sleep(0.1)
        socks = listening(proc.pid)
        check(socks, "the server holds no listening socket: %r" % socks)
        # 0100007F: 127.0.0.1 as /proc/net/tcp writes it
        check(all(fam == "tcp" and addr == "0100007F" and port == PORT
                  for fam, addr, port in socks),
              "the default server listens beyond 127.0.0.1:%d: %r" % (PORT, socks))
        other = other_address()
        if other:
            s = socket.socket()
            s.settimeout(5)
            try:
                s.connect((other, PORT))
                fail("the server answered on %s:%d" % (other, PORT))
            except (ConnectionRefusedError, socket.timeout, OSError) as e:
                print("ok: %s:%d refused (%s)" % (other, PORT, e.__class__.__name__))
            finally:
                s.close()
        else:
            print("  (no address but loopback here: the refusal from outside not tried)")
        text = open(os.path.join(TMP, "server.log"), "rb").read()
        check(b"127.0.0.1:%d" % PORT in text, "the log does not say where: %r" % text[-300:])
        print("ok: with no --listen the server listens on 127.0.0.1:%d only: %r" % (PORT, socks))
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(timeout=30) == 0, "exit status %r" % proc.returncode)
        return 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Fail as e:
        print("FAIL: %s" % e)
        sys.exit(1)
