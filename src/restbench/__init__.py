"""restbench: requirements-based mutation testing for generated REST API tests."""
__version__ = "0.1.0"
