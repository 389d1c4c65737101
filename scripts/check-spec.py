#!/usr/bin/env python3
"""Checks openapi.yaml beyond what openapi-spec-validator does, so other teams can generate clients
from it: every operation has an operationId, a summary and a tag; every operation that takes a token
documents 401 and 403; every request body documents 400, 413 and 422; every path with parameters
documents 404 (path parameters name something that may not exist); every example (request,
response, error) is valid against its schema (JSON Schema 2020-12, through the jsonschema package
openapi-spec-validator brings); and the main operations have examples."""
import sys

import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

MAIN = ["register", "login", "refreshSession", "createQuote", "createOrder", "getOrder", "assignOrder",
        "pickupOrder", "reportLocations", "createLiveTicket", "createUser"]

spec = yaml.safe_load(open(sys.argv[1] if len(sys.argv) > 1 else "openapi.yaml"))
validate(spec)
problems = []


def deref(node):
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 20:
        target = spec
        for part in node["$ref"].split("/")[1:]:
            target = target[part]
        node = target
        seen += 1
    return node


# A JSON Schema document holding the components, so `$ref`s inside schemas resolve.
root = {"$schema": "https://json-schema.org/draft/2020-12/schema", "components": spec["components"]}


def check_examples(where, media):
    media = deref(media)
    schema = media.get("schema")
    examples = media.get("examples", {}) or {}
    if schema is None:
        return 0
    count = 0
    for name, example in examples.items():
        value = deref(example).get("value")
        if isinstance(schema, dict) and schema.get("contentMediaType"):
            continue
        validator = Draft202012Validator({**root, **schema})
        for error in validator.iter_errors(value):
            problems.append(f"{where} example {name}: {error.message} at {list(error.absolute_path)}")
        count += 1
    return count


with_examples = set()
for path, item in spec["paths"].items():
    for method, op in item.items():
        if method == "parameters":
            continue
        name = op.get("operationId")
        where = f"{method.upper()} {path}"
        if not name:
            problems.append(f"{where}: no operationId")
            continue
        if not op.get("summary"):
            problems.append(f"{name}: no summary")
        if not op.get("tags"):
            problems.append(f"{name}: no tag")
        security = op.get("security", spec.get("security"))
        responses = op["responses"]
        if security != [] and "401" not in responses:
            problems.append(f"{name}: takes a token but does not document 401")
        if security not in ([], [{}, {"bearerAuth": []}]) and "403" not in responses:
            problems.append(f"{name}: takes a token but does not document 403")
        if "requestBody" in op:
            for code in ("400", "413", "422"):
                if code not in responses:
                    problems.append(f"{name}: takes a body but does not document {code}")
        if "{" in path and "404" not in responses:
            problems.append(f"{name}: has path parameters but does not document 404")
        if not any(code.startswith("2") for code in responses):
            problems.append(f"{name}: no success response")
        for media in (op.get("requestBody", {}).get("content", {}) or {}).values():
            if check_examples(f"{name} request", media):
                with_examples.add(name)
        for code, response in responses.items():
            for media in (deref(response).get("content", {}) or {}).values():
                if code.startswith("2") and check_examples(f"{name} {code}", media):
                    with_examples.add(name)
                elif not code.startswith("2"):
                    check_examples(f"{name} {code}", media)

for name, schema in spec["components"]["schemas"].items():
    for index, example in enumerate(schema.get("examples", []) if isinstance(schema.get("examples"), list) else []):
        for error in Draft202012Validator({**root, **schema}).iter_errors(example):
            problems.append(f"schema {name} example {index}: {error.message} at {list(error.absolute_path)}")

for name, response in spec["components"]["responses"].items():
    for media in (response.get("content", {}) or {}).values():
        check_examples(f"response {name}", media)

for name in MAIN:
    if name not in with_examples:
        problems.append(f"{name}: a main operation without an example")

if "bearerAuth" not in spec["components"].get("securitySchemes", {}):
    problems.append("no bearerAuth security scheme")

if problems:
    print("openapi.yaml:", *problems, sep="\n  ")
    sys.exit(1)
print(f"openapi.yaml: {sum(1 for i in spec['paths'].values() for m in i if m != 'parameters')} operations documented, "
      f"examples valid against their schemas")
