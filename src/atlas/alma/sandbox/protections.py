"""OS-level lock-down of a sandbox worker: resource limits, Landlock, seccomp (stdlib + ctypes only).

The worker calls ``lockdown`` once, after importing everything it will ever need and before it
runs any design code. Order matters (measured, see OFFLINE.md "Sandboxing designs"):

1. ``import pyseccomp`` — it finds libseccomp through ``ctypes.util.find_library``, which runs
   ``ldconfig`` in a subprocess; that must happen before fork/exec are denied and before the
   filesystem is locked.
2. resource limits (``setrlimit`` is denied by seccomp afterwards, so they are final);
3. Landlock: every filesystem access right is *handled*; only read rights are granted, and only
   beneath the interpreter's stdlib (lazy codec imports). No write, create, remove or truncate
   anywhere.
4. seccomp: default allow, explicit deny-list (sockets, exec, process *and thread* creation, ptrace,
   signals to other processes, privilege and namespace calls, filesystem mutation, io_uring). ``openat`` is not
   blocked (imports need it); opening *for writing* is.

Each step reports what it did; a missing kernel feature is reported, not fatal — the host still
enforces the wall-clock timeout and says which layers are active.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
from typing import Any

# Syscalls refused with EPERM, whatever their arguments.
DENY_ALWAYS: tuple[str, ...] = (
    # network
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    # new programs / processes
    "execve",
    "execveat",
    "fork",
    "vfork",
    # other processes' memory and handles
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_open",
    "pidfd_send_signal",
    "pidfd_getfd",
    "kcmp",
    # privileges, namespaces, kernel
    "setns",
    "unshare",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "settimeofday",
    "clock_settime",
    "sethostname",
    "setdomainname",
    "quotactl",
    "name_to_handle_at",
    "open_by_handle_at",
    "setrlimit",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setgroups",
    "capset",
    # io_uring submits I/O that seccomp cannot see
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    # filesystem mutation (Landlock covers most of it; this also holds where Landlock is missing)
    "creat",
    "mknod",
    "mknodat",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "chmod",
    "fchmod",
    "fchmodat",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "truncate",
    "ftruncate",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "fanotify_init",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
)

# Refused with ENOSYS so that libc falls back to a variant whose arguments seccomp can inspect.
DENY_ENOSYS: tuple[str, ...] = ("clone3", "openat2")


def apply_rlimits(limits: dict[str, Any]) -> dict[str, Any]:
    """Set address-space, CPU, file-size, process, core and open-file limits; report them."""
    as_bytes = int(limits["memory_mb"]) * 1024 * 1024
    cpu = int(limits["cpu_budget_s"])
    plan = {
        "RLIMIT_AS": (resource.RLIMIT_AS, as_bytes, as_bytes),
        "RLIMIT_CPU": (resource.RLIMIT_CPU, cpu, cpu + 1),
        "RLIMIT_FSIZE": (resource.RLIMIT_FSIZE, 0, 0),
        "RLIMIT_NPROC": (resource.RLIMIT_NPROC, 0, 0),
        "RLIMIT_CORE": (resource.RLIMIT_CORE, 0, 0),
        "RLIMIT_NOFILE": (resource.RLIMIT_NOFILE, 64, 64),
    }
    report: dict[str, Any] = {}
    for name, (res, soft, hard) in plan.items():
        try:
            resource.setrlimit(res, (soft, hard))
            report[name] = soft
        except (OSError, ValueError) as exc:
            report[name] = f"failed: {exc}"
    if os.geteuid() == 0:
        report["note"] = "running as root: RLIMIT_NPROC is not enforced; seccomp denies process creation"
    return report


def apply_landlock(read_paths: list[str]) -> dict[str, Any]:
    """Handle every filesystem right; grant read-only access beneath ``read_paths``."""
    try:
        import landlock
        from landlock import FSAccess

        abi = landlock.landlock_abi_version()
        ruleset = landlock.Ruleset()  # handles FSAccess.all(): nothing allowed unless granted
        granted = []
        for path in read_paths:
            if not os.path.exists(path):
                continue
            rights = FSAccess.READ_FILE if os.path.isfile(path) else FSAccess.READ_FILE | FSAccess.READ_DIR
            ruleset.allow(path, rules=rights)
            granted.append(path)
        ruleset.apply()
    except Exception as exc:  # missing package, kernel without Landlock, LSM disabled: report, not fatal
        return {"active": False, "reason": f"{type(exc).__name__}: {exc}".strip()}
    return {"active": True, "abi": abi, "read_only": granted}


def _build_seccomp(own_pid: int) -> tuple[Any, list[str]]:
    import pyseccomp as sc

    flt = sc.SyscallFilter(sc.ALLOW)
    denied: list[str] = []

    def rule(action: int, name: str, *args: Any) -> None:
        try:
            flt.add_rule(action, name, *args)
        except (OSError, ValueError, RuntimeError):
            return  # syscall unknown on this architecture
        if name not in denied:
            denied.append(name)

    eperm = sc.ERRNO(errno.EPERM)
    for name in DENY_ALWAYS:
        rule(eperm, name)
    for name in DENY_ENOSYS:
        rule(sc.ERRNO(errno.ENOSYS), name)
    # no new processes and no new threads either: the worker is single-threaded by design, and a
    # thread left running by a design could outlive its call (clone3 gets ENOSYS above, so libc
    # falls back to clone, which lands here)
    rule(eperm, "clone")
    # signals: only to ourselves
    for name in ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        rule(eperm, name, sc.Arg(0, sc.NE, own_pid))
    # limits may be read (prlimit64 with new_limit == NULL) but never changed
    rule(eperm, "prlimit64", sc.Arg(2, sc.NE, 0))
    # opening for writing, creating or truncating: refused (reads stay allowed for imports)
    for flag in (os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_TRUNC):
        rule(eperm, "open", sc.Arg(1, sc.MASKED_EQ, flag, flag))
        rule(eperm, "openat", sc.Arg(2, sc.MASKED_EQ, flag, flag))
    return flt, denied


def apply_seccomp() -> dict[str, Any]:
    """Load the deny-list filter into this (single-threaded) process."""
    try:
        flt, denied = _build_seccomp(os.getpid())
        flt.load()
    except Exception as exc:  # libseccomp missing or kernel without seccomp: report, not fatal
        return {"active": False, "reason": f"{type(exc).__name__}: {exc}".strip()}
    return {"active": True, "denied_syscalls": len(denied), "action": "EPERM"}


def preload_seccomp() -> str | None:
    """Import pyseccomp now (it spawns ldconfig); return why it is unavailable, or None."""
    try:
        import pyseccomp  # noqa: F401
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def lockdown(limits: dict[str, Any], read_paths: list[str], disable: tuple[str, ...] = ()) -> dict[str, Any]:
    """Apply every layer in the safe order; return the protections report. ``disable`` names
    layers to skip ("landlock", "seccomp") — for tests of the degraded mode, never in production."""
    off = {"active": False, "reason": "disabled by configuration"}
    seccomp_problem = None if "seccomp" in disable else preload_seccomp()
    with contextlib.suppress(Exception):  # a missing package is reported by apply_landlock
        import landlock  # noqa: F401  (imported after pyseccomp, as measured)
    report: dict[str, Any] = {"rlimits": apply_rlimits(limits)}
    report["landlock"] = dict(off) if "landlock" in disable else apply_landlock(read_paths)
    if "seccomp" in disable:
        report["seccomp"] = dict(off)
    elif seccomp_problem:
        report["seccomp"] = {"active": False, "reason": seccomp_problem}
    else:
        report["seccomp"] = apply_seccomp()
    return report


__all__ = ["DENY_ALWAYS", "DENY_ENOSYS", "apply_landlock", "apply_rlimits", "apply_seccomp", "lockdown"]
