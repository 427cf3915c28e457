"""Loaded by every Python process a snippet starts (the runner puts this folder first on
PYTHONPATH): refuse, with PermissionError, any write outside the snippet's work folder, and
note the path in the runner's log, so that a refusal the snippet catches still fails it.

Python-level only: a C extension or another program writing directly is not seen here (the
runner compares the project tree before and after a C snippet)."""
import os
import sys


def _install() -> None:
    work = os.environ.get("SNIPPET_SANDBOX")
    log = os.environ.get("SNIPPET_SANDBOX_LOG")
    if not work or not log:
        return  # not started by the runner: change nothing
    allowed = (os.path.realpath(work) + os.sep, "/dev/", "/proc/")  # /dev/null, /dev/shm...
    log_fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # before the hook
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def resolve(path, dir_fd, follow):
        path = os.fsdecode(os.fspath(path))
        if dir_fd not in (-1, None) and not os.path.isabs(path):
            try:  # relative to an open folder (shutil.rmtree works this way)
                path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
            except OSError:
                pass
        path = os.path.abspath(path)
        if follow:
            return os.path.realpath(path)
        # an operation on the entry itself (remove, rename): resolve its folder, not a symlink
        return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))

    def check(path, dir_fd=-1, follow=True, existing_ok=False):
        if path is None or isinstance(path, int):  # an already open descriptor
            return
        where = resolve(path, dir_fd, follow)
        if (where + os.sep).startswith(allowed) or (existing_ok and os.path.lexists(where)):
            return
        os.write(log_fd, (where + "\n").encode("utf-8", "backslashreplace"))
        raise PermissionError(f"snippet sandbox: writing outside the work folder: {where}")

    def hook(event, args):
        if event == "open":  # open(), io.open, os.open: (path, mode, flags)
            mode, flags = args[1], args[2]
            if (flags & writing if isinstance(flags, int) else
                    isinstance(mode, str) and any(c in mode for c in "wax+")):
                check(args[0])
        elif event == "os.mkdir":  # of an existing folder it fails alone (makedirs(exist_ok))
            check(args[0], args[2], existing_ok=True)
        elif event in ("os.chmod", "os.utime"):
            check(args[0], args[-1])
        elif event == "os.truncate":
            check(args[0])
        elif event in ("os.remove", "os.rmdir"):
            check(args[0], args[1], follow=False)
        elif event == "os.rename":  # os.replace raises os.rename too
            check(args[0], args[2], follow=False)
            check(args[1], args[3], follow=False)
        elif event == "os.link":
            check(args[1], args[3], follow=False)
        elif event == "os.symlink":
            check(args[1], args[2], follow=False)

    sys.addaudithook(hook)


_install()

# Leave sys.path as it would be, and run the sitecustomize this one hides, if there is one.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_me = sys.modules.pop(__name__)
try:
    import sitecustomize  # noqa: F401
except ImportError:
    pass
sys.modules[__name__] = _me
