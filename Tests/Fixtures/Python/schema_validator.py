# SPDX-License-Identifier: Apache-2.0
import json, sys
import jsonschema
spec = json.load(open(sys.argv[1], encoding="utf-8"))
out = []
for name, document in json.load(open(sys.argv[2], encoding="utf-8")):
    schema = {"$ref": "#/components/schemas/" + name, "components": spec["components"]}
    checker = jsonschema.Draft202012Validator(schema)
    out.append([e.message[:200] for e in checker.iter_errors(document)])
print(json.dumps(out))
