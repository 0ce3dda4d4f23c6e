"""HTTP route modules of the Todo API."""
