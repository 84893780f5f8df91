"""JSON schemas for request bodies and query strings, per microversion.

Schemas are plain dicts built from the shared pieces in ``common``; a
later microversion's schema is derived from the previous one by copying
it and changing what that version changed.
"""
