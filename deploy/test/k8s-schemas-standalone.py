"""Makes kubeconform-readable standalone schemas from the PyPI package kubernetes-validate.

Usage: k8s-schemas-standalone.py SOURCE_DIR OUT_DIR VERSION...

kubernetes-validate ships, per Kubernetes version, one schema per kind whose $refs point at
https://kubernetes.io/api/_definitions.json (resolved in-process by that package). kubeconform
would try to fetch that URL, so each top-level kind is rewritten with the definitions it
reaches copied in under $defs:

  OUT_DIR/v<VERSION>-standalone-strict/<kind>-<group>-<version>.json

which kubeconform reads with
  -kubernetes-version VERSION -strict
  -schema-location 'OUT_DIR/{{.NormalizedKubernetesVersion}}-standalone{{.StrictSuffix}}/{{.ResourceKind}}{{.KindSuffix}}.json'
"""

import json
import os
import re
import sys

REF = re.compile(r"^(?:/api/_definitions\.json)?#/\$defs/(.+)$")


def refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def rewrite(node):
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                match = REF.match(value)
                out[key] = f"#/$defs/{match.group(1)}" if match else value
            else:
                out[key] = rewrite(value)
        return out
    if isinstance(node, list):
        return [rewrite(item) for item in node]
    return node


def standalone(schema, definitions):
    needed, pending = set(), list(refs(schema))
    while pending:
        match = REF.match(pending.pop())
        if not match or match.group(1) in needed:
            continue
        name = match.group(1)
        needed.add(name)
        pending.extend(refs(definitions[name]))
    out = rewrite(schema)
    out.pop("$id", None)
    out["$defs"] = {name: rewrite(definitions[name]) for name in sorted(needed)}
    return out


def is_top_level_kind(schema):
    props = schema.get("properties", {})
    return isinstance(props.get("kind"), dict) and "enum" in props["kind"] and "apiVersion" in props


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    source, out_dir, versions = argv[1], argv[2], argv[3:]
    for version in versions:
        src = os.path.join(source, f"v{version}-local-strict")
        with open(os.path.join(src, "_definitions.json"), encoding="utf-8") as handle:
            definitions = json.load(handle)["$defs"]
        dst = os.path.join(out_dir, f"v{version}-standalone-strict")
        os.makedirs(dst, exist_ok=True)
        count = 0
        for name in sorted(os.listdir(src)):
            if name.startswith("_") or name == "all.json" or not name.endswith(".json"):
                continue
            with open(os.path.join(src, name), encoding="utf-8") as handle:
                schema = json.load(handle)
            if not is_top_level_kind(schema):
                continue
            with open(os.path.join(dst, name), "w", encoding="utf-8") as handle:
                json.dump(standalone(schema, definitions), handle)
            count += 1
        print(f"wrote {count} Kubernetes {version} schemas to {dst}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
