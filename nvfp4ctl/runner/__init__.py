"""Running a target: which `custom_kernel` to call (targets) and the watched child process (worker)."""
