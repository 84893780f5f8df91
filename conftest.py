"""Repository root conftest: makes the checkout importable for pytest."""
