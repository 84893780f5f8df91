"""HTTP handlers, one module per resource.

A handler reads in one fixed order: policy, input validation (the schema
for its microversion), objects call, serialisation. It never touches SQL.
"""
