"""Resident-set readings of the current process, shared by the Python sides of the benchmark
(a module without imports of its own, so that each side can use it whatever it runs under)."""


def rss_mb(field="VmRSS"):
    """/proc/self/status's FIELD (VmRSS now, VmHWM peak) in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return None
