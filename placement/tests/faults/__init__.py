"""Fault injection: a write workload, faults on a seeded schedule, a
history of every request, and a checker of that history against every
state the database committed.

``topology`` starts the database servers (PostgreSQL, MariaDB, or a
3-node MariaDB Galera cluster) and the API hosts; ``workload`` sends
claims, moves, deletes, inventory changes and racing consumer updates
through every host; ``nemesis`` kills, pauses, isolates and restarts
what ``topology`` started; ``history`` records what each client
learned; ``stream`` reads the database's own commit-ordered change
stream (PostgreSQL logical decoding, MariaDB's binary log); ``checker``
verifies rules (a)-(f) of ``api-ref/fault-injection.rst``. ``run`` ties
them together (``python -m placement.tests.faults --help``).
"""
