"""Checks a Grafana dashboard against Grafana's own schema, as its
foundation SDK (generated from that schema) reads it: the dashboard is
decoded into the SDK's types and encoded again, and every field of the
file must come back with the same value. A field the schema does not know
is dropped on the way and named. (The SDK does not check the types of
values it keeps: a wrong kind of value is not caught here.)

usage: grafana_check.py DASHBOARD.json
"""

import json
import sys

from grafana_foundation_sdk.cog import plugins
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard


def differences(before, after, path="$"):
    if isinstance(before, dict):
        if not isinstance(after, dict):
            yield f"{path}: read back as {after!r}"
            return
        for key, value in before.items():
            if key not in after:
                yield f"{path}.{key}: not a field the schema knows"
            else:
                yield from differences(value, after[key], f"{path}.{key}")
    elif isinstance(before, list):
        if not isinstance(after, list) or len(after) != len(before):
            yield f"{path}: read back as {after!r}"
            return
        for i, (b, a) in enumerate(zip(before, after)):
            yield from differences(b, a, f"{path}[{i}]")
    elif before != after:
        yield f"{path}: {before!r} read back as {after!r}"


def main(path):
    plugins.register_default_plugins()
    with open(path, encoding="utf-8") as f:
        original = json.load(f)
    decoded = Dashboard.from_json(original)
    again = json.loads(json.dumps(decoded, cls=JSONEncoder))
    found = list(differences(original, again))
    for line in found:
        print(line)
    if found:
        return 1
    print(f"{path}: {len(original.get('panels', []))} panels, every field Grafana's schema knows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
