# SPDX-License-Identifier: Apache-2.0
import json, sys, yaml
print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))
