"""Plan: matrix.yaml + compat.yaml (read safely, schema-checked, one validator per axis) → ImageSpecs.

Only `render` reads the two YAML files; every later stage reads images/<tag>/spec.json."""
