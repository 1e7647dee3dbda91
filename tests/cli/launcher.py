"""Stand-in for a `python -m kaeru ARGS` process that the worker's zygote forks (`tests/cli/zygote.py`).

Run as `python -I -S launcher.py SOCKET -- ARGS` wherever a test would start `python -m kaeru ARGS`
(`subprocess.Popen`, the MCP SDK's stdio client): isolated and without `site`, it starts in a few
milliseconds and imports only the standard library. It hands the zygote at SOCKET its own fds 0, 1
and 2, its environment, its working directory and how it stands (leading a session or a process
group, as the SDK's `start_new_session` makes it), and the zygote forks the server with them. It
then forwards SIGTERM, SIGINT and SIGHUP to the server (through the zygote, which knows whether the
server still runs) and ends as the server ended: with its exit code, or killed by the same signal,
so `returncode` reads as a real server's. Killed itself (SIGKILL, which nothing can forward), its
connection closes, and the zygote kills the server.

It lets go of fds 0/1/2 once they are handed over: the server alone holds them, and its client sees
end of file on its stdout when the server exits, as with a server of its own.
"""

import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
HEADER = struct.Struct("!I")  # tests/cli/zygote.py's


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[1] != "--":
        sys.exit("usage: python -I -S launcher.py SOCKET -- ARGS")
    path, args = argv[0], argv[2:]
    pending: list[int] = []
    conn: list[socket.socket] = []  # once the request is sent: signals go to the server

    def forward(signum: int, frame: object) -> None:
        if conn:
            try:
                conn[0].send(bytes([signum]))
            except OSError:  # the zygote is gone, and the server with it
                pass
        else:
            pending.append(signum)

    for signum in FORWARDED:  # whatever the launcher inherited: the server's disposition decides
        signal.signal(signum, forward)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    if os.getsid(0) == os.getpid():
        session = "session"
    elif os.getpgid(0) == os.getpid():
        session = "group"
    else:
        session = ""
    body = json.dumps(
        {"argv": args, "env": dict(os.environ), "cwd": os.getcwd(), "launched": True, "session": session}
    ).encode()
    socket.send_fds(sock, [HEADER.pack(len(body))], [0, 1, 2])
    sock.sendall(body)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    conn.append(sock)
    while pending:
        forward(pending.pop(0), None)
    replies = b""
    while True:
        try:
            chunk = sock.recv(4096)
        except OSError:  # reset: the zygote went away
            chunk = b""
        if not chunk:  # the zygote went away before the server ended: it killed the server
            _end(-signal.SIGKILL)
        replies += chunk
        *lines, rest = replies.split(b"\n")
        replies = rest
        for line in lines:
            reply = json.loads(line)
            if "status" in reply:
                _end(int(reply["status"]))


def _end(status: int) -> None:
    """Exit as the server did: with its code, or by the signal that killed it."""
    if status >= 0:
        os._exit(status)
    signum = -status
    for forwarded in FORWARDED:
        signal.signal(forwarded, signal.SIG_IGN)  # nothing more to forward
    if signum not in (signal.SIGKILL, signal.SIGSTOP):  # whose handling cannot be set
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # a signal whose default is not to end a process


if __name__ == "__main__":
    main(sys.argv[1:])
