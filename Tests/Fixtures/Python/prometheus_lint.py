# SPDX-License-Identifier: Apache-2.0
import json, re, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1], encoding='utf-8').read()
problems, families, samples = [], {}, 0
try:
    parsed = list(text_string_to_metric_families(text))
except Exception as error:
    print(json.dumps({'families': {}, 'samples': 0, 'problems': [f'parse: {error}']}))
    sys.exit(0)
# The parser drops a counter's _total from the family's name; the exposition's names come
# from its TYPE lines.
declared = dict(re.findall(r'^# TYPE (\S+) (\S+)$', text, re.M))
helped = set(re.findall(r'^# HELP (\S+) \S', text, re.M))
base = {'seconds', 'bytes', 'meters', 'metres', 'grams', 'volts', 'amperes', 'joules',
        'celsius', 'kelvin'}
prefixes = ['pico', 'nano', 'micro', 'milli', 'centi', 'deci', 'deca', 'hecto', 'kilo',
            'kibi', 'mega', 'mebi', 'giga', 'gibi', 'tera', 'tebi', 'peta', 'pebi']
times = {'minutes', 'hours', 'days', 'weeks'}
abbreviations = {'s', 'ms', 'us', 'ns', 'sec', 'b', 'kb', 'mb', 'gb', 'tb', 'pb', 'm', 'h',
                 'd'}
snake = re.compile(r'^[a-z_][a-z0-9_]*$')
for family in parsed:
    kind = family.type
    name = next((n for n in declared if n == family.name or n == family.name + '_total'),
                family.name)
    families[name] = kind
    def problem(text): problems.append(f'{name}: {text}')
    if name not in helped or not family.documentation: problem('no help text')
    if kind == 'counter' and not name.endswith('_total'):
        problem('counter metrics should have "_total" suffix')
    if kind != 'counter' and name.endswith('_total'):
        problem('non-counter metrics should not have "_total" suffix')
    words = name.split('_')
    for word in words:
        if word in times: problem(f'use base unit "seconds" instead of "{word}"')
        for prefix in prefixes:
            if word.startswith(prefix) and word[len(prefix):] in base:
                problem(f'use base unit "{word[len(prefix):]}" instead of "{word}"')
        if word in abbreviations: problem('metric names should not contain abbreviated units')
    for type_name in ['counter', 'gauge', 'histogram', 'summary', 'untyped']:
        if type_name in words: problem(f'metric name should not include type "{type_name}"')
    if ':' in name: problem("metric names should not contain ':'")
    if not snake.match(name): problem("metric names should be written in 'snake_case'")
    if kind not in ('histogram', 'gauge_histogram'):
        if name.endswith('_bucket'): problem('non-histogram metrics should not have "_bucket" suffix')
        if name.endswith(('_count', '_sum')) and kind != 'summary':
            problem('non-histogram and non-summary metrics should not have "_count" or "_sum"')
    for sample in family.samples:
        samples += 1
        for label in sample.labels:
            if not snake.match(label):
                problem(f"label names should be written in 'snake_case': {label}")
            if label == 'le' and kind != 'histogram':
                problem('non-histogram metrics should not have "le" label')
            if label == 'quantile' and kind != 'summary':
                problem('non-summary metrics should not have "quantile" label')
print(json.dumps({'families': families, 'samples': samples, 'problems': problems}))
