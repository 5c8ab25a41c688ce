#!/usr/bin/env python3
"""Validates manifests against syncfiles.schema.json and prints one JSON
object {path: true|false} on stdout. YAML is read the way an editor's
yaml-language-server reads it for our purposes: timestamps stay strings."""
import json
import os
import sys

import jsonschema
import yaml


class Loader(yaml.SafeLoader):
    pass


# Keep RFC 3339 timestamps as strings (PyYAML would make datetimes).
Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "syncfiles.schema.json")) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

result = {}
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            doc = yaml.load(f, Loader=Loader)
        errors = list(validator.iter_errors(doc))
        result[path] = not errors
        for e in errors:
            print(f"{path}: {'/'.join(map(str, e.absolute_path))}: {e.message}", file=sys.stderr)
    except yaml.YAMLError as e:
        result[path] = False
        print(f"{path}: {e}", file=sys.stderr)
print(json.dumps(result))
