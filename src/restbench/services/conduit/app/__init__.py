"""Conduit: a FastAPI implementation of the RealWorld blogging API."""
