"""Load scripts run against a live Placement server (see each module)."""
