"""Turns CustomResourceDefinitions into strict kubeconform schemas.

Usage: crd-to-jsonschema.py OUT_DIR CRD.yaml...

Writes OUT_DIR/<group>/<kind>_<version>.json for every served version, which kubeconform
finds with -schema-location 'OUT_DIR/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json'.

"Strict" as kubeconform's own converter means it: an object that lists its properties and
says nothing about others rejects unknown keys, unless the CRD keeps unknown fields
(x-kubernetes-preserve-unknown-fields). Kubernetes' OpenAPI extensions that plain JSON
Schema does not know are rewritten (int-or-string, nullable).
"""

import json
import os
import sys

import yaml


class CrdLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """YAML 1.1 reads a bare `=` (an enum value in some CRDs) as the obscure !!value tag."""


CrdLoader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


def strict(node):
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: strict(value) for key, value in node.items()}
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        out["oneOf"] = [{"type": "string"}, {"type": "integer"}]
    if out.pop("nullable", False) and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    preserve = out.get("x-kubernetes-preserve-unknown-fields") is True
    if "properties" in out and "additionalProperties" not in out and not preserve:
        out["additionalProperties"] = False
    return out


def convert(path, out_dir):
    written = []
    with open(path, encoding="utf-8") as handle:
        documents = [d for d in yaml.load_all(handle, Loader=CrdLoader) if d]
    for crd in documents:
        if crd.get("kind") != "CustomResourceDefinition":
            continue
        spec = crd["spec"]
        group, kind = spec["group"], spec["names"]["kind"]
        for version in spec["versions"]:
            if not version.get("served", True):
                continue
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if schema is None:
                continue
            schema = strict(schema)
            props = schema.setdefault("properties", {})
            # The CRD leaves these to the API server; pin them so a typo is caught.
            props["apiVersion"] = {"type": "string", "enum": [f"{group}/{version['name']}"]}
            props["kind"] = {"type": "string", "enum": [kind]}
            schema.setdefault("additionalProperties", False)
            target = os.path.join(out_dir, group, f"{kind.lower()}_{version['name']}.json")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8") as handle:
                json.dump(schema, handle, indent=1, sort_keys=True)
            written.append(target)
    return written


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out_dir = argv[1]
    count = sum(len(convert(path, out_dir)) for path in argv[2:])
    if count == 0:
        sys.exit("no CustomResourceDefinition found")
    print(f"wrote {count} CRD schemas to {out_dir}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
