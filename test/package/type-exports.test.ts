/**
 * The root entry exports the public types by name (`export type *` also listed CLAIM_MAX, a value, as a named
 * export that does not exist at run time). This keeps the list whole: a type added to src/types.ts or
 * src/queue/types.ts must be added to src/index.ts too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const src = (file: string) => readFileSync(join(__dirname, '..', '..', 'src', file), 'utf8');
const index = src('index.ts');

test.each(['types.ts', 'queue/types.ts'])('every type exported by src/%s is exported by src/index.ts', (file) => {
  const names = [...src(file).matchAll(/^export (?:interface|type) (\w+)/gm)].map((m) => m[1]!);
  expect(names.length).toBeGreaterThan(5);
  expect(names.filter((name) => !new RegExp(`\\b${name}\\b`).test(index))).toEqual([]);
});

test('src/index.ts exports no module wholesale (a value would leak as a type-only name)', () => {
  expect(index).not.toMatch(/^export (?:type )?\*/m);
});
