# SPDX-License-Identifier: Apache-2.0
# The OpenAPI checker of OpenAPITests: sends each case with http.client and checks the answer
# with openapi-core against the document. Arguments: the port, the document, the cases (JSON).
import http.client, json, re, sys
from urllib.parse import parse_qsl, urlsplit
import jsonschema
from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse

port, spec_path, cases_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
spec = json.load(open(spec_path, encoding="utf-8"))
api = OpenAPI.from_dict(spec)
error_document = jsonschema.Draft202012Validator(
    {"$ref": "#/components/schemas/ErrorDocument", "components": spec["components"]})
# Bodies the document describes by media type alone (OpenAPI 3.1: no schema for binary
# content) must at least be of that type.
magic = {"image/png": lambda d: d.startswith(b"\x89PNG\r\n\x1a\n"),
         "application/pdf": lambda d: d.startswith(b"%PDF-"),
         "image/svg+xml": lambda d: b"<svg" in d[:400],
         "application/postscript": lambda d: d.startswith(b"%!PS")}
# Paths hold letters, digits, '/', '.', and '{name}' templates (one segment each).
templates = [(re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"), path)
             for path in spec["paths"]]
def documented(path):
    return next((template for pattern, template in templates if pattern.match(path)), None)
results = []
for case in json.load(open(cases_path, encoding="utf-8")):
    body = open(case["file"], "rb").read() if case.get("file") else case.get("data", "").encode()
    headers = {"Content-Type": case["type"]} if case.get("type") else {}
    headers.update(case.get("headers") or {})
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    if case.get("declaredLength") is not None:
        connection.putrequest(case["method"], case["target"])
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(case["declaredLength"]))
        connection.putheader("Expect", "100-continue")
        connection.endheaders()
    else:
        connection.request(case["method"], case["target"], body=body or None, headers=headers)
    answer = connection.getresponse()
    data = answer.read()
    connection.close()
    content_type = answer.getheader("Content-Type", "")
    url = urlsplit(case["target"])
    problems = []
    if case["method"].lower() not in spec["paths"].get(documented(url.path), {}):
        try:
            error_document.validate(json.loads(data))
        except Exception as error:
            problems.append(f"error body: {error}"[:400])
    else:
        request = MockRequest(
            f"http://127.0.0.1:{port}", case["method"].lower(), url.path,
            args=dict(parse_qsl(url.query, keep_blank_values=True)), data=body,
            content_type=case.get("type") or "application/octet-stream")
        if 200 <= case["expect"] < 300:
            try:
                api.validate_request(request)
            except Exception as error:
                problems.append(f"request: {error!r} ({error.__cause__!r})"[:400])
        try:
            api.validate_response(
                request, MockResponse(data, status_code=answer.status, content_type=content_type))
        except Exception as error:
            problems.append(f"response: {error!r} ({error.__cause__!r})"[:400])
        if case["method"] != "HEAD" and content_type in magic and not magic[content_type](data):
            problems.append(f"the body is not {content_type}: {data[:40]!r}")
    results.append({"name": case["name"], "status": answer.status,
                    "contentType": content_type, "problems": problems})
print(json.dumps(results))
