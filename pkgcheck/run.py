"""``./dev package-check``: build, inspect and install every package as a user would.

1. Build each package's sdist, and its wheel from that sdist (``python -m build``).
2. Check the metadata of all ten (``dists.py``): no direct references, a ``toolmend``
   range that admits the core being built, the license.
3. Install each package alone from its wheel (the core's wheel beside it where it needs
   ``toolmend``; everything else from the registry, at the versions of
   ``requirements/dev.txt``) into a fresh virtual environment, ``pip check`` it, run its
   console scripts' ``--help`` and its smoke test (``smoke_<package>.py``), from outside
   the checkout so nothing but the installed wheel can be imported.
4. The workspace: a copy of ``packages/``, installed as docs/getting-started/index.md says
   (``pip install -e`` of all of them at once) into a fresh environment; an edit of the
   core's text then shows in what the LangChain adapter returns.
5. The examples (``examples_step``): for each distinct ``pip install`` line of their
   headers, a fresh environment with exactly that, from the wheels of step 1 and a
   wheelhouse of the rest, offline (``--no-index``); then every command of every header,
   as written, against ``toolmend-engine serve`` where it takes one (the header's own, or
   one from the README's engine install line), each printing its line of
   ``tools/example_headers.py``'s ``KEY_LINES``.

Runs with the build tools' Python (``build``, ``hatchling``, ``packaging``; pip's cache is
shared, so the llama-cpp-python wheel built once is reused, never rebuilt).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from dists import metadata_of, problems, requires_dist

from tools import example_headers
from tools.engine_process import engine_process

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
CONSTRAINTS = ROOT / "requirements" / "dev.txt"
# The sentence the LangChain smoke test shows for a write that timed out (VERIFY_FIRST in
# toolmend/deliver/_guidance.py); the workspace step edits it in the copy of the core.
VERIFY_FIRST = (
    "This call may already have taken effect. Check whether it did before calling it again."
)
EDITED = "EDITED IN THE WORKSPACE COPY: check first."


@dataclass(frozen=True)
class Package:
    folder: str
    name: str
    extra: str | None  # installed with the wheel: what the default command needs
    scripts: tuple[str, ...]


PACKAGES = (
    Package("core", "toolmend", None, ("toolmend",)),
    Package("langchain", "toolmend-langchain", None, ()),
    Package("openai_agents", "toolmend-openai-agents", None, ()),
    Package("mcp_client", "toolmend-mcp", None, ()),
    Package("engine", "toolmend-engine", "model", ("toolmend-engine",)),
    Package("dbos", "toolmend-dbos", None, ()),
    Package("adk", "toolmend-adk", None, ()),
    Package("pydantic_ai", "toolmend-pydantic-ai", None, ()),
)


class Failed(Exception):
    """A check failed; the message says which and why."""


# The longest an example may run: the slowest takes under a minute on 2 busy cores.
EXAMPLE_TIMEOUT = 600.0
# An example that reached past loopback would fail at once: the proxies of its shell point
# at a closed loopback port (httpx, requests and the OpenAI clients honour them).
OFFLINE = {
    name: value
    for key, value in {
        "http_proxy": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
        "all_proxy": "http://127.0.0.1:9",
        "no_proxy": "127.0.0.1,localhost",
    }.items()
    for name in (key, key.upper())
}


def say(text: str) -> None:
    print(f"\033[1m[package-check]\033[0m {text}", file=sys.stderr, flush=True)


def run(
    args: Sequence[str],
    log: Path,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> str:
    """Run ``args``; its output goes to ``log``; a failure shows the end of it."""
    try:
        done = subprocess.run(
            list(args), cwd=cwd, env=env, capture_output=True, text=True, check=False,
            timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise Failed(f"{' '.join(args)} did not end within {timeout:.0f}s") from None
    log.write_text(f"$ {' '.join(args)}\n{done.stdout}\n{done.stderr}", encoding="utf-8")
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-40:])
        raise Failed(f"{' '.join(args)} exited with {done.returncode}:\n{tail}")
    return done.stdout


def clean_env() -> dict[str, str]:
    """The environment of a user's shell: nothing points into the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def venv(path: Path, log: Path) -> Path:
    run([sys.executable, "-m", "venv", "--without-pip", str(path)], log)
    return path / "bin" / "python"


def pip(python: Path, args: Sequence[str], log: Path) -> str:
    """This pip, installing into ``python``'s environment (``pip --python``)."""
    return run([sys.executable, "-m", "pip", "--python", str(python), *args], log)


def build(tmp: Path, chosen: Sequence[Package]) -> dict[str, tuple[Path, Path]]:
    dist = tmp / "dist"
    built: dict[str, tuple[Path, Path]] = {}
    for package in chosen:
        out = dist / package.folder
        run(
            [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out),
             str(ROOT / "packages" / package.folder)],
            tmp / f"build-{package.folder}.log",
        )  # fmt: skip
        (wheel,) = out.glob("*.whl")
        (sdist,) = out.glob("*.tar.gz")
        built[package.folder] = (wheel, sdist)
    return built


def check_metadata(built: dict[str, tuple[Path, Path]]) -> None:
    core_text, _ = metadata_of(built["core"][0])
    core_version = next(
        line.split(":", 1)[1].strip()
        for line in core_text.splitlines()
        if line.startswith("Version:")
    )
    found: list[str] = []
    for wheel, sdist in built.values():
        for dist in (wheel, sdist):
            text, names = metadata_of(dist)
            found += [f"{dist.name}: {p}" for p in problems(text, core_version, names)]
        lines = requires_dist(metadata_of(wheel)[0])
        say(f"{wheel.name}: " + (" | ".join(lines) if lines else "no Requires-Dist"))
    if found:
        raise Failed("metadata:\n" + "\n".join(found))


def install_alone(tmp: Path, package: Package, built: dict[str, tuple[Path, Path]]) -> None:
    home = tmp / f"alone-{package.folder}"
    home.mkdir()
    python = venv(home / "venv", home / "venv.log")
    wheel = built[package.folder][0]
    target = f"{wheel}[{package.extra}]" if package.extra else str(wheel)
    wheels = [target] if package.folder == "core" else [str(built["core"][0]), target]
    pip(python, ["install", "-q", "-c", str(CONSTRAINTS), *wheels], home / "install.log")
    pip(python, ["check"], home / "check.log")
    env = clean_env()
    bin_dir = python.parent
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    for script in package.scripts:
        text = run(
            [str(bin_dir / script), "--help"], home / f"{script}-help.log", cwd=home, env=env
        )
        if not text.startswith("usage: "):
            raise Failed(f"{script} --help printed {text[:200]!r}")
    smoke = HERE / f"smoke_{package.folder}.py"
    out = run([str(python), "-I", str(smoke)], home / "smoke.log", cwd=home, env=env)
    say(f"{package.name} alone: installed, pip check, smoke test: {out.splitlines()[0][:100]}")


def workspace(tmp: Path) -> None:
    """The contributors' install: editable, all at once, resolved by name."""
    home = tmp / "workspace"
    copy = home / "packages"
    shutil.copytree(
        ROOT / "packages",
        copy,
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist"),
    )
    python = venv(home / "venv", home / "venv.log")
    editable: list[str] = []
    for package in PACKAGES:
        editable += ["-e", str(copy / package.folder)]
    pip(python, ["install", "-q", "-c", str(CONSTRAINTS), *editable], home / "install.log")
    pip(python, ["check"], home / "check.log")
    env = clean_env()
    smoke = [str(python), "-I", str(HERE / "smoke_langchain.py")]
    where = run(
        [str(python), "-I", "-c", "import toolmend_langchain, toolmend; print(toolmend.__file__)"],
        home / "where.log",
        cwd=home,
        env=env,
    ).strip()
    if not Path(where).is_relative_to(copy / "core" / "src"):
        raise Failed(f"the workspace imports the core from {where}, not from {copy}/core/src")
    before = run(smoke, home / "before.log", cwd=home, env=env)
    guidance = copy / "core" / "src" / "toolmend" / "deliver" / "_guidance.py"
    source = guidance.read_text(encoding="utf-8")
    if VERIFY_FIRST not in before or source.count(VERIFY_FIRST) != 1:
        raise Failed(
            f"the workspace check expects {VERIFY_FIRST!r} once in {guidance.name} and in "
            f"the LangChain smoke output; update pkgcheck/run.py. Output:\n{before}"
        )
    guidance.write_text(source.replace(VERIFY_FIRST, EDITED), encoding="utf-8")
    after = run(smoke, home / "after.log", cwd=home, env=env)
    if EDITED not in after or VERIFY_FIRST in after:
        raise Failed(f"an edit of the core did not reach the LangChain adapter:\n{after}")
    say(
        "workspace: pip install -e of every package resolves; a core edit shows through the adapter"
    )


def offline(wheelhouse: Path, built: dict[str, tuple[Path, Path]]) -> list[str]:
    """pip's options that install from the wheels built here and the wheelhouse only."""
    links = ["--find-links", str(wheelhouse)]
    for wheel, _ in built.values():
        links += ["--find-links", str(wheel.parent)]
    return ["--no-index", *links]


def fill_wheelhouse(
    tmp: Path, wheelhouse: Path, wanted: Sequence[str], built: dict[str, tuple[Path, Path]]
) -> None:
    """The third-party wheels ``wanted`` needs, at the versions of requirements/dev.txt.

    Kept in ``wheelhouse`` (a cache folder per requirements/dev.txt, like the
    development environment), so that every later run installs offline.  Filled from the
    registry only where an offline resolution fails: once, or after a package gains a
    dependency.  pip's cache supplies the llama-cpp-python wheel built by the set-up.
    """
    wheelhouse.mkdir(parents=True, exist_ok=True)
    with (wheelhouse.parent / f"{wheelhouse.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two clones fill it once
        probe = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
                 "-q", *offline(wheelhouse, built), "-c", str(CONSTRAINTS), *wanted]  # fmt: skip
        if subprocess.run(probe, capture_output=True, check=False).returncode == 0:
            return
        say(f"filling {wheelhouse} from the registry (set-up: once per requirements/dev.txt)")
        links = offline(wheelhouse, built)[1:]
        run(
            [sys.executable, "-m", "pip", "wheel", "-q", "-w", str(wheelhouse), *links,
             "-c", str(CONSTRAINTS), *wanted],
            tmp / "wheelhouse.log",
        )  # fmt: skip
        for wheel, _ in built.values():  # ours come from this run's build, never from here
            (wheelhouse / wheel.name).unlink(missing_ok=True)


def run_example(
    python: Path, command: str, home: Path, log: Path, url: str | None
) -> tuple[str, float]:
    """Run one header command in ``python``'s environment; return its key line's prefix."""
    env = {**clean_env(), **OFFLINE}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    written = command
    if url is not None:  # serve listens on a free port, not on the default 8080
        command = command.replace(example_headers.SERVE_URL, f"{url}/v1")
        env["TOOLMEND_BASE_URL"] = f"{url}/v1"
    args = shlex.split(command)
    found = shutil.which(args[0], path=env["PATH"])
    if found is None or Path(found).parent != python.parent:
        raise Failed(f"{written}: {args[0]} is not the fresh environment's ({found})")
    started = time.monotonic()
    out = run([found, *args[1:]], log, cwd=home, env=env, timeout=EXAMPLE_TIMEOUT)
    key = example_headers.KEY_LINES[written]
    if not any(line.startswith(key) for line in out.splitlines()):
        raise Failed(f"{written}: no line starts with {key!r}; it printed:\n{out[-3000:]}")
    return key, time.monotonic() - started


def examples_step(tmp: Path, built: dict[str, tuple[Path, Path]], wheelhouse: Path) -> None:
    """Every example, in a fresh environment per ``pip install`` line of the headers."""
    headers = [example_headers.header(e) for e in example_headers.examples()]
    commands = [c for h in headers for c in h.commands]
    if sorted(commands) != sorted(example_headers.KEY_LINES):
        raise Failed(
            f"the header commands {sorted(commands)} are not those of KEY_LINES in "
            f"tools/example_headers.py {sorted(example_headers.KEY_LINES)}"
        )
    groups: dict[tuple[str, ...], list[example_headers.Header]] = {}
    for h in headers:
        groups.setdefault(h.install, []).append(h)
    engine_line = example_headers.readme_engine_install()
    fill_wheelhouse(tmp, wheelhouse, sorted({r for i in [*groups, engine_line] for r in i}), built)
    home = tmp / "examples"
    shutil.copytree(
        ROOT / "examples", home / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {**clean_env(), **OFFLINE}

    def fresh(name: str, install: Sequence[str]) -> Path:
        step = time.monotonic()
        python = venv(home / name, home / f"{name}-venv.log")
        links = offline(wheelhouse, built)
        pip(
            python,
            ["install", "-q", *links, "-c", str(CONSTRAINTS), *install],
            home / f"{name}.log",
        )
        pip(python, ["check"], home / f"{name}-check.log")
        say(f"  pip install {shlex.join(install)}: fresh, offline ({time.monotonic() - step:.0f}s)")
        return python

    with ExitStack() as servers:

        def serve(python: Path) -> str:
            program = (str(python.parent / "toolmend-engine"),)
            try:
                running = servers.enter_context(
                    engine_process("serve", program=program, env=env, cwd=home)
                )
            except RuntimeError as exc:  # it said why on stderr, and stopped
                raise Failed(f"{program[0]} {exc}") from None
            return running.url

        readme_serve: list[str] = []  # started by the first command that needs it
        for index, (install, members) in enumerate(groups.items()):
            python = fresh(f"env-{index}", install)
            own = serve(python) if any(h.serves for h in members) else None
            for h in members:
                for n, command in enumerate(h.commands):
                    url = own
                    if url is None and example_headers.SERVE_URL in command:
                        if not readme_serve:
                            readme_serve.append(serve(fresh("readme-engine", engine_line)))
                        url = readme_serve[0]
                    log = home / f"{Path(h.example).stem}-{n}.log"
                    key, seconds = run_example(python, command, home, log, url)
                    where = f" (serve at {url})" if url else ""
                    say(f"  {command}{where}: {key[:50]!r}... ({seconds:.0f}s)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", help="comma-separated folders under packages/ (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--no-workspace", action="store_true", help="skip step 4")
    parser.add_argument(
        "--wheelhouse", type=Path, help="step 5's cache of third-party wheels (no step 5 without)"
    )
    parser.add_argument("--examples-only", action="store_true", help="steps 1, 2 and 5 only")
    args = parser.parse_args(argv)
    wanted = set(args.only.split(",")) if args.only else {p.folder for p in PACKAGES}
    chosen = [p for p in PACKAGES if p.folder in wanted or p.folder == "core"]
    tmp = Path(tempfile.mkdtemp(prefix="toolmend-package-check-"))
    started = time.monotonic()
    try:
        built = build(tmp, chosen)
        say(f"built {2 * len(built)} distributions in {time.monotonic() - started:.0f}s")
        check_metadata(built)
        for package in chosen:
            if package.folder in wanted and not args.examples_only:
                step = time.monotonic()
                install_alone(tmp, package, built)
                say(f"  ({time.monotonic() - step:.0f}s)")
        if not args.no_workspace and not args.examples_only:
            step = time.monotonic()
            workspace(tmp)
            say(f"  ({time.monotonic() - step:.0f}s)")
        if args.wheelhouse is not None and not args.only:
            step = time.monotonic()
            say("examples: each header's pip install line in a fresh environment, offline")
            examples_step(tmp, built, args.wheelhouse)
            say(f"examples: every header command ran ({time.monotonic() - step:.0f}s)")
    except Failed as exc:
        say(f"FAILED: {exc}")
        say(f"logs: {tmp}")
        return 1
    say(f"all packaging checks passed in {time.monotonic() - started:.0f}s")
    if args.keep:
        say(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
        say(f"removed the temporary folder; {time.monotonic() - started:.0f}s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
