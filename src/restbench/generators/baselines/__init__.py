"""Baselines that need no LLM: what existing REST testing tools check, scored like any generator.

They read only the requirement's `operations`, the OpenAPI document and the service's `auth` and
`seed` facts, never the requirement's wording: the precise and the vague variant get the same file.
"""

from restbench.generators.baselines.schema_oracle import SchemaOracleGenerator
from restbench.generators.baselines.schemathesis_checks import SchemathesisGenerator
from restbench.generators.baselines.status_oracle import StatusOracleGenerator

__all__ = ["SchemaOracleGenerator", "SchemathesisGenerator", "StatusOracleGenerator"]
