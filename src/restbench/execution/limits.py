"""The limits of one execution, shared by the worker that sets them and the harness that names
them in an execution's reason."""

import resource

MEMORY_LIMIT_BYTES = 2 * 1024**3  # address space of each process
FILE_SIZE_LIMIT_BYTES = 64 * 1024**2  # each file written, the output included
PROCESS_LIMIT = 64
# The longest time limit an execution may be given: a day. Past ~3e9 s the worker's timers
# overflowed and every execution became an error.
LONGEST_TIMEOUT_S = 86_400.0
# The most executions in parallel on one machine (each is a worker process with its sandbox):
# far more than any machine's cores, well short of what makes the start itself take minutes.
MOST_WORKERS = 1024
OPEN_FILES_LIMIT = 1024
# The size of the test's writable /tmp: a tmpfs, memory, so it is bounded.
SCRATCH_SIZE = "512m"
# Each file a built-in service's server writes (its database, in memory where the machine has a
# tmpfs, and its log), and each file of the harness's own PostgreSQL server. A test that stores
# ever larger bodies through the API gets the service's 500 once a file reaches this, instead of
# filling the machine's memory for every execution that runs beside it.
SERVER_FILE_SIZE_LIMIT_BYTES = 128 * 1024**2


def limit_memory(limit: int) -> None:
    """This process's data (RLIMIT_DATA: heap and private writable mappings, not the shared
    libraries nor the address space it only reserves) stays under `limit`, or a lower limit
    already set. Set on each service server (`serving.server_limits`)."""
    _lower(resource.RLIMIT_DATA, limit)


def limit_file_size(limit: int) -> None:
    """No file this process writes grows past `limit` (a write past it fails with EFBIG where
    the process ignores SIGXFSZ, as Python and PostgreSQL do), or past a lower limit already
    set."""
    _lower(resource.RLIMIT_FSIZE, limit)


def _lower(which: int, limit: int) -> None:
    _, hard = resource.getrlimit(which)
    bound = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(which, (bound, bound))
