"""``toolmend-engine serve`` and ``proxy`` as a user starts them: real processes on loopback.

The tests of the examples and of the client snippets run against these, so what they
check is the command line's defaults (the model names ``serve`` answers to, its
ports) and not a server built in the test's own process.  Port 0 picks a free port;
the process says which on its first line of stderr.  ``./dev package-check`` starts
the ``toolmend-engine`` of a fresh environment built from wheels through it too, for
the examples (``pkgcheck/run.py``), hence its place in ``tools/``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

_LISTENING = re.compile(r"on (http://127\.0\.0\.1:\d+)(/v1)? ")


@dataclass
class Running:
    """A started process: where it listens, and its stderr so far (read on a thread).

    Attributes:
        url: The base URL, without ``/v1``.
        log: The lines of stderr, the first one included.
    """

    url: str
    log: list[str] = field(default_factory=list)


@contextmanager
def engine_process(
    *args: str,
    timeout: float = 60.0,
    program: Sequence[str] = (sys.executable, "-m", "toolmend_engine.cli"),
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[Running]:
    """Run ``toolmend-engine ARGS --port 0`` and yield where it listens and its log.

    Args:
        args: The command and its options, e.g. ``("serve",)`` or
            ``("proxy", "--upstream", url)``.
        timeout: Seconds the process may take to say where it listens.
        program: What runs as ``toolmend-engine``: by default this Python's module,
            or the console script of another environment.
        env: The process's environment (default: this one's).
        cwd: Its working directory (default: this one's).
    """
    command = [*program, *args, "--port", "0"]
    environment = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=environment,
        cwd=cwd,
    )
    drain: threading.Thread | None = None
    try:
        assert process.stderr is not None
        seen: list[str] = []
        for line in process.stderr:
            seen.append(line)
            found = _LISTENING.search(line)
            if found:
                break
        else:
            raise RuntimeError(f"{' '.join(args)} did not start: {''.join(seen)}")
        running = Running(found.group(1), seen)
        # drained, so that a full pipe never blocks the server's logging; complete once
        # the process has ended (joined below)
        drain = threading.Thread(target=seen.extend, args=(process.stderr,), daemon=True)
        drain.start()
        yield running
    finally:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if drain is not None:
            drain.join(timeout)
        if process.stderr is not None:
            process.stderr.close()
