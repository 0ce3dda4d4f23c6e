"""The one root of user-facing errors.

Anything raised as a `RestbenchError` is a mistake the user can fix (a bad data file, an unknown
generator, a mutant that does not apply). The CLI prints it as a single line, without traceback.
"""


class RestbenchError(Exception):
    """A user-facing error; its message is one line that names the file, the item and the problem."""


class DataError(RestbenchError):
    """Benchmark data (requirements, mutants, golden tests) is malformed or inconsistent."""


class MutationError(DataError):
    """A mutant or benign variant cannot be applied to the service's source."""


class GeneratorError(RestbenchError):
    """A generator cannot be found, loaded or constructed."""


class ServiceStartError(RestbenchError):
    """A service implementation did not start or stopped answering."""


class ServiceBuildError(ServiceStartError):
    """A service implementation's build (its manifest's [build] command) failed."""


class SelectionError(RestbenchError):
    """A requirement id or glob given on the command line names nothing."""
