# SPDX-License-Identifier: Apache-2.0
import json, sys, yaml
from kubernetes import client
models = {('apps/v1', 'Deployment'): 'V1Deployment', ('v1', 'Service'): 'V1Service',
          ('batch/v1', 'Job'): 'V1Job', ('v1', 'ConfigMap'): 'V1ConfigMap',
          ('v1', 'PersistentVolumeClaim'): 'V1PersistentVolumeClaim',
          ('autoscaling/v2', 'HorizontalPodAutoscaler'): 'V2HorizontalPodAutoscaler',
          ('policy/v1', 'PodDisruptionBudget'): 'V1PodDisruptionBudget'}
api = client.ApiClient()
# What ApiClient.deserialize does once it has the answer's JSON (its own signature changed
# in client 32: a response object before, the text and its type after).
deserialize = api._ApiClient__deserialize
documents, problems = [], []
def compare(read, kept, where, at):
    if isinstance(read, dict):
        if not isinstance(kept, dict):
            return problems.append(f'{where}: {at or "."} is not an object')
        for key, value in read.items():
            if key not in kept: problems.append(f'{where}: {at}.{key} is not a field there')
            else: compare(value, kept[key], where, f'{at}.{key}')
    elif isinstance(read, list):
        if not isinstance(kept, list) or len(kept) != len(read):
            return problems.append(f'{where}: {at} is not a list')
        for index, (value, back) in enumerate(zip(read, kept)):
            compare(value, back, where, f'{at}[{index}]')
    elif read != kept or type(read) != type(kept):
        problems.append(f'{where}: {at} is {read!r}; the model reads {kept!r}')
for path in sys.argv[1:]:
    for index, document in enumerate(yaml.safe_load_all(open(path, encoding='utf-8'))):
        where = f'{path.rsplit("/", 1)[-1]}#{index}'
        model = models.get((document.get('apiVersion'), document.get('kind')))
        if model is None:
            problems.append(f'{where}: {document.get("apiVersion")} {document.get("kind")} '
                            'is not a kind this check knows')
            continue
        try:
            read = deserialize(document, model)
        except Exception as error:
            problems.append(f'{where}: {model}: {error}')
            continue
        compare(document, api.sanitize_for_serialization(read), where, '')
        documents.append(f'{where} {document["kind"]} {read.metadata.name}')
print(json.dumps({'documents': documents, 'problems': problems}))
