"""A Python that has imported a group of snippets' frameworks once, and forks a child for each
snippet of the group (pipeline/running/warm.py starts it and talks to it). Standard library only:
it runs on the snippets' Python, which need not hold this project's packages.

    python zygote.py '{"env": [["set", "KERAS_BACKEND", "jax"]], "preload": ["numpy", "keras"]}'

It applies the group's environment settings, imports `preload` in order (what each snippet of the
group does first, with the same settings), then reads one request a line on stdin and answers on
stdout, in JSON:

    -> {"id": 3, "program": "lstm.py", "cwd": "/work/x", "env": {...}, "out": "...", "err": "..."}
    <- {"ready": true}                      once, after the imports
    <- {"id": 3, "pid": 1234}               the child runs
    <- {"pid": 1234, "status": 0}           it ended (os.waitpid's status)

The child is what `python lstm.py` in that folder with that environment would be, past its
imports: its own session (the runner kills its group), stdout and stderr to the files, the
sandbox's audit hook installed for its folder, sys.argv and sys.path[0] as Python sets them, and
the program run as __main__. It exits through the interpreter's normal exit (atexit, threads),
with the program's exit status. The zygote itself runs nothing but imports, in one thread, so
that a fork copies no lock held by another thread of ours. On end of input it waits for its
children and exits.
"""
import importlib
import json
import os
import select
import sys


def main() -> None:
    spec = json.loads(sys.argv[1])
    requests_fd, answers_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # what the imports print goes to the zygote's stderr, which the runner reads
    for how, name, value in spec["env"]:
        if how == "set":
            os.environ[name] = value
        else:
            os.environ.setdefault(name, value)
    for module in spec["preload"]:
        importlib.import_module(module)
    sys.stdout.flush()
    sys.stderr.flush()
    answers = os.fdopen(answers_fd, "w", buffering=1)

    def answer(**message) -> None:
        answers.write(json.dumps(message) + "\n")

    answer(ready=True)
    running: set[int] = set()
    pending, reading = b"", True
    while reading or running:
        ready, _, _ = select.select([requests_fd] if reading else [], [], [], 0.05)
        while running:  # reap what ended
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            running.discard(pid)
            answer(pid=pid, status=status)
        if not ready:
            continue
        data = os.read(requests_fd, 1 << 16)
        if not data:
            reading = False
            continue
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                os.close(requests_fd)
                answers.close()
                child(request)  # does not return: the child exits the interpreter
            running.add(pid)
            answer(id=request["id"], pid=pid)


def child(request: dict) -> None:
    os.setsid()
    for fd, path in ((1, request["out"]), (2, request["err"])):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(f, fd)
        os.close(f)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    import tempfile
    tempfile.tempdir = None  # found again from this environment's TMPDIR
    sys.argv = [request["program"]]
    sys.path[0] = os.getcwd()  # as `python program.py` sets it: the program's folder
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    guard = sys.modules.get("sitecustomize")  # the sandbox's, on PYTHONPATH
    if guard is not None and hasattr(guard, "_install"):
        guard._install()
    import runpy
    import traceback
    try:
        runpy.run_path(request["program"], run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code
    except BaseException:  # as the interpreter reports an uncaught exception
        traceback.print_exc()
        code = 1
    raise SystemExit(code)


if __name__ == "__main__":
    main()
