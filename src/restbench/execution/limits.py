"""The limits of one execution, shared by the worker that sets them and the harness that names
them in an execution's reason."""

MEMORY_LIMIT_BYTES = 2 * 1024**3  # address space of each process
FILE_SIZE_LIMIT_BYTES = 64 * 1024**2  # each file written, the output included
PROCESS_LIMIT = 64
OPEN_FILES_LIMIT = 1024
# The size of the test's writable /tmp: a tmpfs, memory, so it is bounded.
SCRATCH_SIZE = "512m"
# Each file a built-in service's server writes: its database (in memory, where the machine has a
# tmpfs) and its log. A test that stores ever larger bodies through the API gets the service's
# 500 once its database reaches this, instead of filling the machine's memory for every
# execution that runs beside it.
SERVER_FILE_SIZE_LIMIT_BYTES = 128 * 1024**2
